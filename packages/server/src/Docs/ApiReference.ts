/**
 * The interactive API reference at `/docs`: Scalar's standalone bundle,
 * served by this service (no CDN), so the page works offline.
 *
 * - The bundle is the copy of Scalar's `standalone.js` that the `effect`
 *   package vendors for `HttpApiScalar` (not exported, so it is imported from
 *   effect's own directory): no second 300 MB dependency tree for one file.
 * - Scalar is configured to load no web fonts (system fonts instead) and to
 *   hide its developer toolbar, whose "Share" and "Generate SDKs" buttons
 *   upload the document to Scalar's hosted services.
 * - The page carries the OpenAPI document, as `/openapi.json` serves it
 *   (this Scalar release does not render a document it fetches by `url`).
 * - `/docs` is a page that revalidates (`no-cache` with an `ETag`); the
 *   bundle has a content-hashed URL cached for a year (`immutable`). Both are
 *   served brotli- or gzip-compressed as the client accepts, compressed once,
 *   on first use.
 */
import { Effect } from "effect"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

/** Scalar's configuration (github.com/scalar/scalar, documentation/configuration.md). */
const scalarConfiguration = {
  _integration: "html",
  withDefaultFonts: false,
  showDeveloperTools: "never",
  customCss: ":root { --scalar-font: system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif; " +
    "--scalar-font-code: ui-monospace, \"SF Mono\", Menlo, Consolas, monospace; }"
}

/** An asset with its compressed forms, made on first request. */
interface Asset {
  readonly contentType: string
  readonly cacheControl: string
  readonly etag: string
  readonly encoded: () => Readonly<Record<"br" | "gzip" | "identity", Uint8Array>>
}

const once = <A>(make: () => A): () => A => {
  let value: A | undefined
  return () => (value ??= make())
}

const asset = (body: string, contentType: string, cacheControl: string): Asset => {
  const bytes = new TextEncoder().encode(body)
  return {
    contentType,
    cacheControl,
    etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 22)}"`,
    encoded: once(() => ({
      identity: bytes,
      gzip: gzipSync(bytes, { level: 9 }),
      br: brotliCompressSync(bytes, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length }
      })
    }))
  }
}

/** The coding to send for an `Accept-Encoding` header (q-values of 0 refuse). */
export const negotiateEncoding = (acceptEncoding: string | undefined): "br" | "gzip" | "identity" => {
  const accepted = new Set(
    (acceptEncoding ?? "").split(",").map((part) => part.trim().split(";")).filter(([, q]) =>
      q === undefined || !/^q=0(\.0*)?$/.test(q.trim())
    )
      .map(([coding]) => coding.trim().toLowerCase())
  )
  if (accepted.has("br")) return "br"
  if (accepted.has("gzip")) return "gzip"
  return "identity"
}

const serve = (asset: Asset) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const headers = { "cache-control": asset.cacheControl, etag: asset.etag, vary: "accept-encoding" }
    if (request.headers["if-none-match"] === asset.etag) return HttpServerResponse.empty({ status: 304, headers })
    const coding = negotiateEncoding(request.headers["accept-encoding"])
    return HttpServerResponse.uint8Array(asset.encoded()[coding], {
      contentType: asset.contentType,
      headers: coding === "identity" ? headers : { ...headers, "content-encoding": coding }
    })
  })

/** Scalar's standalone bundle as `effect` vendors it. */
const loadScalar = Effect.promise(async () => {
  const effectEntry = fileURLToPath(import.meta.resolve("effect"))
  const module = await import(
    pathToFileURL(join(dirname(effectEntry), "http-api", "internal", "httpApiScalar.js")).href
  ) as {
    readonly javascript: string
  }
  return module.javascript
})

const escapeJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

const page = (document: OpenApi.OpenAPISpec, scriptPath: string) =>
  `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${document.info.title.replace(/[<>&]/g, "")}</title>
  </head>
  <body>
    <!-- Not id="api-reference": Scalar mounts itself on that one too, and then shows an empty page. -->
    <div id="app"></div>
    <script src="${scriptPath}"></script>
    <script>
      window.Scalar.createApiReference(document.getElementById("app"), {
        ...${escapeJson(scalarConfiguration)},
        content: ${escapeJson(document)}
      })
    </script>
  </body>
</html>
`

/** `GET {path}` for the API's reference and its bundle under `{path}/`. */
export const ApiReferenceLive = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  options: { readonly path: `/${string}` }
) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const javascript = yield* loadScalar
    const script = asset(javascript, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable")
    const scriptPath: `/${string}` = `${options.path}/scalar-${script.etag.slice(1, 13)}.js`
    const html = asset(page(OpenApi.fromApi(api), scriptPath), "text/html; charset=utf-8", "no-cache")
    yield* router.add("GET", options.path, serve(html))
    yield* router.add("GET", scriptPath, serve(script))
  }))
