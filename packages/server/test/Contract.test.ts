/**
 * The contract as outside tools see it (issue #9): `/openapi.json` as served,
 * and a client that openapi-typescript generates from it, used with
 * openapi-fetch by a program that `tsc --strict` typechecks and Node runs
 * against the service. (`pnpm lint:openapi` lints the same document with
 * redocly and Spectral.)
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import openapiTS, { astToString } from "openapi-typescript"
import { newAction, param } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import { createKey, http, layer as testServer, serverSuite, TestServer } from "./TestServer.ts"

type Json = Record<string, any>

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url))

const methods = ["get", "put", "post", "delete", "patch"] as const

const operationsOf = (document: Json) =>
  Object.entries(document.paths as Json).flatMap(([path, item]) =>
    methods.filter((method) => item[method] !== undefined).map((method) => ({
      path,
      method,
      operation: item[method] as Json
    }))
  )

const servedDocument = Effect.map(http("/openapi.json"), (result) => result.body as Json)

/** Whether a media type object shows an example: its own, or its schema's. */
const hasExample = (document: Json, media: Json) => {
  if (media.example !== undefined || media.examples !== undefined) return true
  const schema = typeof media.schema?.$ref === "string"
    ? document.components.schemas[media.schema.$ref.split("/").pop()]
    : media.schema
  return Array.isArray(schema?.examples) && schema.examples.length > 0
}

const resolveResponse = (document: Json, response: Json): Json =>
  typeof response.$ref === "string" ? document.components.responses[response.$ref.split("/").pop()!] : response

/** Every object of a JSON value. */
const objectsOf = (value: unknown): Array<Json> =>
  Array.isArray(value)
    ? value.flatMap(objectsOf)
    : typeof value === "object" && value !== null
    ? [value as Json, ...Object.values(value).flatMap(objectsOf)]
    : []

/** One GET with node:http, which (unlike fetch) shows the body as sent: compressed. */
const rawGet = (url: string, headers: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<
      {
        readonly status: number
        readonly headers: Record<string, string | Array<string> | undefined>
        readonly body: Buffer
      }
    >(
      (resolve, reject) => {
        httpRequest(url, { headers }, (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on(
            "end",
            () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) })
          )
        }).on("error", reject).end()
      }
    )
  )

/** The program an outside user writes: openapi-fetch over the generated `paths`. */
const clientProgram = `import createClient from "openapi-fetch"
import type { paths } from "./platform.js"

const client = createClient<paths>({
  baseUrl: process.env.BASE_URL!,
  headers: { authorization: \`Bearer \${process.env.API_KEY}\` }
})

const agents = await client.GET("/v1/agents", { params: { query: {} } })
const names: Array<string> = (agents.data?.agents ?? []).map((agent) => agent.name)

const executed = await client.POST("/v1/actions/{id}/execute", {
  params: { path: { id: process.env.ACTION_ID! } },
  body: { params: { city: "Lisbon", days: 2 } }
})
const success: boolean | undefined = executed.data?.success

const missing = await client.GET("/v1/agents/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } })
const tag: string | undefined = missing.error?._tag

console.log(JSON.stringify({
  agentsStatus: agents.response.status,
  names,
  executedStatus: executed.response.status,
  success,
  response: executed.data?.response,
  missingStatus: missing.response.status,
  tag
}))
`

layer(testServer(), serverSuite)("the contract for outside tools", (it) => {
  describe("GET /openapi.json", () => {
    it.effect("names its server and license; its tags are unique and described; every operation has a description", () =>
      Effect.gen(function*() {
        const document = yield* servedDocument
        assert.deepStrictEqual(document.servers, [{ url: "/", description: "The service that serves this document" }])
        assert.strictEqual(document.info.license.identifier, "MIT")
        const names = document.tags.map((tag: Json) => tag.name)
        assert.deepStrictEqual(names, [...new Set(names)])
        for (const tag of document.tags) assert.isString(tag.description, `tag ${tag.name}`)
        for (const { method, operation, path } of operationsOf(document)) {
          assert.isString(operation.summary, `${method} ${path}`)
          assert.isString(operation.description, `${method} ${path}`)
        }
      }))

    it.effect("every request and response of the API-key interface (/v1) carries an example", () =>
      Effect.gen(function*() {
        const document = yield* servedDocument
        const missing: Array<string> = []
        for (const { method, operation, path } of operationsOf(document)) {
          if (!path.startsWith("/v1/")) continue
          for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
            if (!hasExample(document, media as Json)) missing.push(`${method} ${path} request ${type}`)
          }
          for (const [status, response] of Object.entries(operation.responses as Json)) {
            for (const [type, media] of Object.entries(resolveResponse(document, response).content ?? {})) {
              if (!hasExample(document, media as Json)) missing.push(`${method} ${path} ${status} ${type}`)
            }
          }
        }
        assert.deepStrictEqual(missing, [])
      }))

    it.effect("documents 413 and 415 on bodies and 429 on the API-key interface; no ±(2^53 − 1) bounds; request bodies open; execute params open", () =>
      Effect.gen(function*() {
        const document = yield* servedDocument
        for (const { method, operation, path } of operationsOf(document)) {
          if (operation.requestBody !== undefined) {
            assert.containsAllKeys(operation.responses, ["413", "415"], `${method} ${path}`)
            for (const media of Object.values(operation.requestBody.content) as Array<Json>) {
              assert.notInclude(JSON.stringify(media.schema), "\"additionalProperties\":false", `${method} ${path}`)
            }
          } else if (method !== "get") {
            // The edge refuses a non-JSON body on an operation that reads none too (POST /api/auth/logout, ...).
            assert.containsAllKeys(operation.responses, ["415"], `${method} ${path}`)
          }
          if ((operation.parameters ?? []).some((parameter: Json) => parameter.in === "path")) {
            // A path parameter whose percent-encoding does not decode is a 400 on every such operation.
            assert.containsAllKeys(operation.responses, ["400"], `${method} ${path}`)
          }
          if (path.startsWith("/v1/") && !path.startsWith("/v1/keys")) {
            assert.containsAllKeys(operation.responses, ["429"], `${method} ${path}`)
          }
        }
        const bounds = objectsOf(document).filter((node) =>
          Math.abs(node.maximum) === 9007199254740991 || Math.abs(node.minimum) === 9007199254740991
        )
        assert.deepStrictEqual(bounds, [])
        const execute = document.paths["/v1/actions/{id}/execute"].post.requestBody.content["application/json"].schema
        assert.strictEqual(execute.properties.params.additionalProperties, true)
      }))
  })

  describe("GET /docs", () => {
    it.effect("serves the reference page and Scalar's bundle from this service, compressed, without web fonts or hosted-service buttons", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const page = yield* rawGet(`${server.baseUrl}/docs`, { "accept-encoding": "gzip, deflate, br" })
        assert.strictEqual(page.status, 200)
        assert.strictEqual(page.headers["content-encoding"], "br")
        assert.strictEqual(page.headers["cache-control"], "no-cache")
        assert.strictEqual(page.headers["vary"], "accept-encoding")
        const html = brotliDecompressSync(page.body).toString("utf8")
        const script = /<script src="(\/docs\/scalar-[A-Za-z0-9_-]+\.js)"><\/script>/.exec(html)?.[1]
        assert.isString(script)
        assert.notMatch(html, /<(script|link)[^>]+(src|href)="https?:/, "the page loads nothing from another origin")
        assert.include(html, "\"withDefaultFonts\":false")
        assert.include(html, "\"showDeveloperTools\":\"never\"")
        assert.include(html, "\"openapi\":\"3.1.0\"")

        const bundle = yield* rawGet(`${server.baseUrl}${script}`, { "accept-encoding": "gzip" })
        assert.strictEqual(bundle.status, 200)
        assert.strictEqual(bundle.headers["content-encoding"], "gzip")
        assert.strictEqual(bundle.headers["cache-control"], "public, max-age=31536000, immutable")
        assert.match(String(bundle.headers["content-type"]), /^text\/javascript/)
        const javascript = gunzipSync(bundle.body).toString("utf8")
        assert.include(javascript, "createApiReference")
        assert.isBelow(bundle.body.length, javascript.length / 3)

        const plain = yield* rawGet(`${server.baseUrl}${script}`, {})
        assert.isUndefined(plain.headers["content-encoding"])
        assert.strictEqual(plain.body.toString("utf8"), javascript)
        const revalidated = yield* rawGet(`${server.baseUrl}/docs`, { "if-none-match": String(page.headers["etag"]) })
        assert.strictEqual(revalidated.status, 304)
        assert.strictEqual(revalidated.body.length, 0)
      }))
  })

  describe("a client generated with openapi-typescript and openapi-fetch", () => {
    it.effect("typechecks under tsc --strict and calls the service: a list, an execution with params, a typed 404", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const document = yield* servedDocument
        const target = yield* localServer(() => jsonAnswer(200, { weather: "sunny" }))
        const action = yield* newAction({
          name: "Weather",
          url: `${target.url}/weather/{city}`,
          parameters: [param("city", "string", true), param("days", "integer", false)]
        })
        const { key } = yield* createKey(["agents:read", "actions"])

        // An outside project: its own folder, the generated types, a strict tsconfig; packages resolve from the root.
        const cache = join(repositoryRoot, "node_modules", ".cache")
        mkdirSync(cache, { recursive: true })
        const project = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(cache, "openapi-client-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const types = astToString(yield* Effect.promise(() => openapiTS(JSON.stringify(document))))
        writeFileSync(join(project, "platform.ts"), types)
        writeFileSync(join(project, "client.ts"), clientProgram)
        writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module" }))
        writeFileSync(
          join(project, "tsconfig.json"),
          JSON.stringify({
            compilerOptions: {
              strict: true,
              target: "ES2022",
              module: "NodeNext",
              moduleResolution: "NodeNext",
              types: ["node"],
              typeRoots: [join(repositoryRoot, "node_modules", "@types")],
              outDir: "out",
              noEmitOnError: true
            },
            files: ["client.ts", "platform.ts"]
          })
        )
        const tsc = join(repositoryRoot, "node_modules", ".bin", "tsc")
        const compiled = yield* Effect.sync(() => {
          try {
            return execFileSync(tsc, ["-p", project], { encoding: "utf8" })
          } catch (error) {
            return `tsc failed: ${(error as { stdout?: string }).stdout ?? String(error)}`
          }
        })
        assert.strictEqual(compiled, "")

        const output = yield* Effect.promise(() =>
          new Promise<string>((resolve, reject) =>
            import("node:child_process").then(({ execFile }) =>
              execFile(
                process.execPath,
                [join(project, "out", "client.js")],
                {
                  env: { ...process.env, BASE_URL: server.baseUrl, API_KEY: key, ACTION_ID: action.id }
                },
                (
                  error,
                  stdout,
                  stderr
                ) => (error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)))
              )
            )
          )
        )
        const result = JSON.parse(output)
        assert.strictEqual(result.agentsStatus, 200)
        assert.isArray(result.names)
        assert.strictEqual(result.executedStatus, 200)
        assert.isTrue(result.success)
        assert.deepStrictEqual(result.response, { weather: "sunny" })
        assert.strictEqual(target.received[0].url, "/weather/Lisbon?days=2")
        assert.strictEqual(result.missingStatus, 404)
        assert.strictEqual(result.tag, "NotFound")
      }))
  })
})
