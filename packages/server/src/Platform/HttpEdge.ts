/**
 * The edge of the HTTP server, applied to every request before routing:
 * request ids, the `/api/v1` alias of the key interface, the body size limit,
 * what every request's text must be (valid Unicode, a JSON media type),
 * structured request logs, and the translation of whatever the API layer
 * leaves unhandled (unknown routes, wrong methods, malformed or invalid
 * input, oversized bodies, defects) into the contract's `{error}` bodies —
 * or, under a path with its own error format (SCIM), into that format: see
 * {@link errorFormats}. What Node refuses before a request exists (bad
 * request lines, headers too large, slow clients, too many connections from
 * one address) is answered by {@link makeNodeServer} in the same shape.
 */
import { Api, Errors, Knowledge, Scim } from "@agent-platform/domain"
import { ByteSize, Cause, Clock, Context, Effect, type Fiber, Layer, LogLevel } from "effect"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as References from "effect/References"
import { createServer, type Server } from "node:http"
import type { Socket } from "node:net"
import { ServerConfig } from "./Config.ts"
import { allPlain, directBuffer, formatPlainEntry, formatRequestEntry, type RequestLogFields } from "./LogWriter.ts"
import { CurrentRequestInfo, makeRequestInfo } from "./RequestInfo.ts"
import { describeSchemaError } from "./SchemaErrors.ts"

const validRequestId = /^[A-Za-z0-9._:\-]{1,128}$/

/** Paths whose bodies may exceed the general limit: document ingestion. */
const isIngest = (url: string) => url.startsWith("/v1/knowledge/ingest")

/** An error body in some format: its media type and its JSON value. */
export interface ErrorBody {
  readonly contentType: string
  readonly body: unknown
}

/** How the errors under a path prefix look. */
export type ErrorFormat = (status: number, error: string, tag: string) => ErrorBody

/** The contract's general error body, `{error, _tag}`. */
export const contractErrorFormat: ErrorFormat = (_status, error, tag) => ({
  contentType: "application/json",
  body: { error, _tag: tag }
})

/**
 * The error formats by path prefix, first match wins; the contract's
 * `{error}` body everywhere else. SCIM plugs its own in here (an entry
 * below), so that errors produced by the edge and
 * by Node (404, 405, 413, 415, 400 for malformed input, 500) under its path
 * are in SCIM's error schema too.
 */
export const errorFormats: ReadonlyArray<readonly [prefix: string, format: ErrorFormat]> = [
  ["/v1/scim", (status, error) => ({
    contentType: Scim.mediaType,
    body: Scim.scimError(status, error, status === 400 ? "invalidSyntax" : undefined)
  })]
]

/** The error body for a request path (undefined: no request line could be read). */
export const errorBodyFor = (path: string | undefined, status: number, error: string, tag: string): ErrorBody => {
  const format = path === undefined
    ? undefined
    : errorFormats.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))
  return (format?.[1] ?? contractErrorFormat)(status, error, tag)
}

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The longest path parameter effect's router takes (find-my-way's `maxParamLength`); ids are far shorter. */
const maxPathParameterLength = 100

/**
 * The answer to a path whose shape names a route of its method but whose
 * parameter the router refused: one whose percent-encoding does not decode (a
 * `%` not followed by two hex digits, or bytes that are not UTF-8) is a
 * malformed request, 400; one over the router's length limit names nothing,
 * 404 — which every operation with an id declares, so typed clients read it
 * as one of theirs.
 */
const refusedPathParameter = (path: string) => {
  try {
    decodeURIComponent(path)
  } catch {
    return errorResponse(
      path,
      400,
      new Errors.InvalidRequest({
        error:
          `Invalid path ${path}: it holds a malformed percent-encoding (a % not followed by two hexadecimal digits, or bytes that are not UTF-8); encode a literal % as %25.`
      })
    )
  }
  return errorResponse(
    path,
    404,
    new Errors.NotFound({
      error:
        `Not found: a path parameter is longer than ${maxPathParameterLength} characters, and no id of this API is that long.`
    })
  )
}

/** An error of the domain's `Errors` (its `_tag` names it), answered with `status`. */
interface EdgeError {
  readonly _tag: string
  readonly error: string
}

const errorResponse = (path: string, status: number, failure: EdgeError, headers: Record<string, string> = {}) => {
  const { body, contentType } = errorBodyFor(path, status, failure.error, failure._tag)
  return HttpServerResponse.jsonUnsafe(body, { status, headers, contentType })
}

/** The SQLSTATE of a database error the API layer left unhandled, if it is one. */
const sqlStateOf = (error: unknown): unknown => {
  const sql = error as
    | { readonly _tag?: string; readonly reason?: { readonly cause?: { readonly code?: unknown } } }
    | undefined
  return sql?._tag === "SqlError" ? sql.reason?.cause?.code : undefined
}

/**
 * PostgreSQL refuses NUL characters in text (SQLSTATE 22021) and jsonb
 * (22P05). Input that reaches the database with one is the client's mistake,
 * whichever field carried it: a 400, not a 500.
 */
const isUnstorableText = (error: unknown): boolean => {
  const state = sqlStateOf(error)
  return state === "22021" || state === "22P05"
}

/**
 * A foreign key violation (SQLSTATE 23503) reaching the edge: the handlers
 * check what a request refers to before writing, so this is a record removed
 * by another request in between (an agent deleted while actions were being
 * assigned to it): a 409 to retry, not a 500.
 */
const isVanishedReference = (error: unknown): boolean => sqlStateOf(error) === "23503"

/**
 * The database cannot be reached (a connection refused, dropped or timed out:
 * the driver's `ConnectionError`), or is shutting down or starting (SQLSTATE
 * 57P01–57P03): a 503 to retry, not a 500 to report.
 */
const isDatabaseUnavailable = (error: unknown): boolean => {
  const sql = error as { readonly _tag?: string; readonly reason?: { readonly _tag?: string } } | undefined
  if (sql?._tag !== "SqlError") return false
  const state = sqlStateOf(error)
  return sql.reason?._tag === "ConnectionError" || state === "57P01" || state === "57P02" || state === "57P03"
}

/** Seconds a caller is told to wait before retrying while the database is unavailable. */
const databaseRetryAfterSeconds = 5

const partLabel: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Body: "response body",
  Headers: "header",
  Params: "path parameter",
  Payload: "request body",
  Query: "query parameter",
  ResponseHeaders: "response header"
}

/** Turns what the router and the API layer could not answer into a response. */
const recover = (request: HttpServerRequest.HttpServerRequest, requestId: string) => (cause: Cause.Cause<unknown>) => {
  const path = pathOf(request.url)
  for (const reason of cause.reasons) {
    const error = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (HttpApiError.HttpApiSchemaError.is(error) && error.kind !== "Body" && error.kind !== "ResponseHeaders") {
      return Effect.succeed(errorResponse(
        path,
        400,
        new Errors.InvalidRequest({
          error: `Invalid ${partLabel[error.kind]}: ${describeSchemaError(error.cause.issue)}`
        })
      ))
    }
    if (HttpServerError.isHttpServerError(error)) {
      const inner = error.reason
      if (inner._tag === "RouteNotFound") {
        const unsupported = Scim.unsupportedEndpoint(path)
        if (unsupported !== undefined) {
          return Effect.succeed(errorResponse(path, 501, new Errors.NotImplemented({ error: unsupported })))
        }
        const allowed = allowedMethods(path)
        if (allowed.includes(request.method)) {
          // The method's own route has this shape, yet the router refused a path parameter.
          return Effect.succeed(refusedPathParameter(path))
        }
        return Effect.succeed(
          allowed.length > 0
            ? errorResponse(
              path,
              405,
              new Errors.MethodNotAllowed({
                error: `${request.method} is not allowed on ${path}: use ${allowed.join(" or ")}.`
              }),
              { allow: allowed.join(", ") }
            )
            : errorResponse(
              path,
              404,
              new Errors.NotFound({ error: `No route for ${request.method} ${path}. The API reference is at /docs.` })
            )
        )
      }
      if (inner._tag === "RequestParseError") {
        return Effect.succeed(
          inner.reason === "BodyTooLarge"
            ? errorResponse(
              path,
              413,
              new Errors.PayloadTooLarge({
                error: "Request body too large: send at most 1 MiB (2 MiB of content for ingest)."
              })
            )
            : errorResponse(
              path,
              400,
              new Errors.InvalidRequest({
                error: "Malformed request body: send valid JSON with Content-Type: application/json."
              })
            )
        )
      }
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(error)) {
      return Effect.succeed(errorResponse(path, 413, new Errors.PayloadTooLarge({ error: "Request body too large." })))
    }
    if (isUnstorableText(error)) {
      return Effect.succeed(errorResponse(
        path,
        400,
        new Errors.InvalidRequest({
          error: request.url.includes("%00")
            ? "Invalid path or query parameter: text must not contain NUL (%00) characters."
            : "Invalid request body: text must not contain NUL (\\u0000) characters."
        })
      ))
    }
    if (isVanishedReference(error)) {
      return Effect.succeed(errorResponse(
        path,
        409,
        new Errors.Conflict({
          error:
            "Something this request refers to was deleted by another request while it ran: read it again, then retry if it still makes sense."
        })
      ))
    }
  }
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
  if (cause.reasons.some((reason) => Cause.isDieReason(reason) && isDatabaseUnavailable(reason.defect))) {
    const unavailable = new Errors.ServiceUnavailable({
      error:
        `The database is unavailable (request ${requestId}); retry in ${databaseRetryAfterSeconds} seconds. If it persists, tell the operator.`
    })
    return Effect.logError("the database is unavailable; answered 503 (check DATABASE_URL and the server)", cause).pipe(
      Effect.as(errorResponse(path, 503, unavailable, { "retry-after": String(databaseRetryAfterSeconds) }))
    )
  }
  return Effect.logError("Unhandled error while serving a request", cause).pipe(
    Effect.as(errorResponse(
      path,
      500,
      new Errors.InternalServerError({
        error:
          `Internal server error (request ${requestId}). Retry later; if it persists, report this request id to the operator.`
      })
    ))
  )
}

/** A request body's media type as effect's HttpApi matches it: lower-cased, without parameters. */
const mediaTypeOf = (contentType: string) => contentType.split(";")[0].trim().toLowerCase()

/**
 * Every route the service serves: the contract's endpoints and the few routes
 * outside it, each with the media types its body may have (an endpoint's
 * payload encodings — `application/json` for every one, SCIM's also
 * `application/scim+json` —, JSON for a route that reads no body; none for
 * the pages, which take none).
 */
const routes: ReadonlyArray<
  { readonly method: string; readonly pattern: RegExp; readonly accepts: ReadonlyArray<string> }
> = [
  ...Object.values(Api.groups).flatMap((group) =>
    Object.values(group.endpoints).map((endpoint) => ({
      method: endpoint.method,
      pattern: new RegExp(
        `^${endpoint.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]\w*/g, "[^/]+")}/?$`
      ),
      // `application/json` first: the type a refusal names first.
      accepts: ["application/json", ...[...endpoint.payload.keys()].filter((type) => type !== "application/json")]
    }))
  ),
  // `/mcp` answers POST only (GET and DELETE, which MCP's sessions would use, are routed to its own 405).
  { method: "POST", pattern: /^\/mcp$/, accepts: ["application/json"] },
  { method: "GET", pattern: /^\/openapi\.json$/, accepts: [] },
  { method: "GET", pattern: /^\/docs$/, accepts: [] }
]

/** The methods a known path answers (empty for an unknown path): a 405 with `Allow`, not a 404. */
const allowedMethods = (path: string): ReadonlyArray<string> => [
  ...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))
]

/** The longest request target accepted (longer: 414). */
export const maxUrlLength = 8 * 1024

const hasBody = (request: HttpServerRequest.HttpServerRequest) => {
  const length = request.headers["content-length"]
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined
}

/**
 * What the edge refuses before routing, in one place for every endpoint: a
 * request target too long (414) and a body in a media type the route does not
 * take (415: effect's HttpApi would answer it in plain text). Both are decided
 * from the request line and headers: the body is not read here. Text that is
 * not valid Unicode (a lone UTF-16 surrogate such as `"\ud800"`) is refused
 * (400) where JSON bodies are parsed: effect's HttpApi payload decoder
 * (patches/effect@4.1.0.patch) and `/mcp` (WellFormedJson.ts).
 */
const refuseBadInput = (
  request: HttpServerRequest.HttpServerRequest,
  withBody: boolean
): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
  if (request.url.length > maxUrlLength) {
    return Effect.succeed(errorResponse(
      pathOf(request.url),
      414,
      new Errors.UriTooLong({ error: `The request URL is longer than ${maxUrlLength} characters.` })
    ))
  }
  // Most requests (every GET) carry no body, and every route with a body takes JSON: nothing to look up.
  if (!withBody || request.method === "GET" || request.method === "HEAD") return undefined
  const encoding = request.headers["content-encoding"]
  if (encoding !== undefined && encoding.trim().toLowerCase() !== "identity") {
    // RFC 9110 §8.4: a content coding the server does not decode is a 415, not a body read as if plain.
    return Effect.succeed(errorResponse(
      pathOf(request.url),
      415,
      new Errors.UnsupportedMediaType({
        error: `Unsupported Content-Encoding ${encoding}: send the body uncompressed (no Content-Encoding).`
      })
    ))
  }
  const contentType = request.headers["content-type"] ?? ""
  const mediaType = mediaTypeOf(contentType)
  if (mediaType === "application/json") return undefined
  const path = pathOf(request.url)
  const route = routes.find((candidate) => candidate.method === request.method && candidate.pattern.test(path))
  if (route === undefined || route.accepts.length === 0 || route.accepts.includes(mediaType)) return undefined
  return Effect.succeed(errorResponse(
    path,
    415,
    new Errors.UnsupportedMediaType({
      error: `Unsupported Content-Type ${contentType === "" ? "(none)" : contentType}: send a JSON body with ${
        route.accepts.map((type) => `Content-Type: ${type}`).join(" or ")
      }.`
    })
  ))
}

/** Rewrites `/api/v1/...` to `/v1/...`: the spec shows the key interface at both roots. */
const aliasApiV1 = (request: HttpServerRequest.HttpServerRequest) =>
  request.url.startsWith("/api/v1/") || request.url === "/api/v1"
    ? request.modify({ url: request.url.slice(4) })
    : request

const generalMaxBody = (config: typeof ServerConfig.Service) => ByteSize.bytes(config.maxBodyBytes)
const ingestMaxBody = ByteSize.bytes(Knowledge.maxContentBytes + 64 * 1024)

/**
 * The level of a request's log line: Info, except a healthy answer of
 * `/health`, at Debug. Load balancers and orchestrators probe it every few
 * seconds on every replica; at Info those probes would be most of the log and
 * say nothing. A degraded (503) or refused probe is still logged at Info.
 */
export const requestLogLevel = (path: string, status: number): LogLevel.Severity =>
  status === 200 && path === "/health" ? "Debug" : "Info"

/**
 * The request log line, at `level`: written straight to the JSON logger's line
 * buffer when that is the fiber's only logger (the line it would write, minus
 * the cost of the logger pipeline); else through the logger pipeline.
 */
const logRequest = (
  fiber: Fiber.Fiber<unknown, unknown>,
  level: LogLevel.Severity,
  fields: RequestLogFields
): Effect.Effect<void> => {
  if (LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), level)) return Effect.void
  const buffer = directBuffer(fiber.getRef(References.CurrentLoggers))
  const outer = fiber.getRef(References.CurrentLogAnnotations)
  if (buffer === undefined || fiber.getRef(References.CurrentLogSpans).length > 0 || !allPlain(outer)) {
    return Effect.logWithLevel(level)("request").pipe(Effect.annotateLogs(fields))
  }
  const millis = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
  for (const _ in outer) {
    // Annotations from outside the request (none in the service): the generic plain line.
    buffer.append(`${formatPlainEntry("request", level, new Date(millis), { ...outer, ...fields }, fiber.id)}\n`)
    return Effect.void
  }
  buffer.append(`${formatRequestEntry(level, millis, fields, fiber.id)}\n`)
  return Effect.void
}

/**
 * The edge middleware, installed for every route. Per request it makes one
 * context update (the request, its body limit, its `RequestInfo` and the
 * `request_id` log annotation together) and writes one request log line.
 */
export const HttpEdgeLive = HttpRouter.middleware(
  Effect.gen(function*() {
    const config = yield* ServerConfig
    const maxBody = generalMaxBody(config)
    return (httpApp) =>
      Effect.withFiber((fiber) => {
        const original = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const request = aliasApiV1(original)
        const incomingId = request.headers["x-request-id"]
        const requestId = incomingId !== undefined && validRequestId.test(incomingId)
          ? incomingId
          : crypto.randomUUID()
        const info = makeRequestInfo(requestId)
        const start = performance.now()
        const withBody = hasBody(request)
        const refusal = refuseBadInput(request, withBody)
        const handled = refusal ?? httpApp
        const annotations = fiber.getRef(References.CurrentLogAnnotations)
        return handled.pipe(
          Effect.catchCause(recover(request, requestId)),
          Effect.updateContext((context: Context.Context<never>) => {
            let next = request === original
              ? context
              : Context.add(context, HttpServerRequest.HttpServerRequest, request)
            // Only a request with a body reads the limit: a GET's context is one entry shorter.
            if (withBody) {
              next = Context.add(next, HttpIncomingMessage.MaxBodySize, isIngest(request.url) ? ingestMaxBody : maxBody)
            }
            next = Context.add(next, CurrentRequestInfo, info)
            return Context.add(next, References.CurrentLogAnnotations, { ...annotations, request_id: requestId })
          }),
          Effect.flatMap((response) => {
            const path = pathOf(request.url)
            const logged = logRequest(fiber, requestLogLevel(path, response.status), {
              request_id: requestId,
              method: request.method,
              path,
              status: response.status,
              duration_ms: Math.round((performance.now() - start) * 10) / 10,
              tenant_id: info.tenantId ?? null
            })
            const answered = HttpServerResponse.setHeaders(response, info.responseHeaders)
            return logged === Effect.void ? Effect.succeed(answered) : Effect.as(logged, answered)
          })
        )
      })
  }),
  { global: true }
)

/** CORS for the configured origins (off when none are configured). */
export const CorsLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  if (config.corsOrigins.length === 0) return Layer.empty
  return HttpRouter.cors({
    allowedOrigins: config.corsOrigins,
    credentials: !config.corsOrigins.includes("*"),
    exposedHeaders: [
      "X-Request-Id",
      "X-Chat-Id",
      "Retry-After",
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset"
    ]
  })
}))

/** What the Node server enforces before a request reaches the edge. */
export interface NodeServerLimits {
  /** Time to receive a request's headers (slow headers: 408). */
  readonly headersTimeoutMs: number
  /** Time to receive a whole request, body included (slow bodies: 408). */
  readonly requestTimeoutMs: number
  /** Open connections one client address may hold; more are answered 429 and closed. */
  readonly maxConnectionsPerIp: number
}

const statusText: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Payload Too Large",
  414: "URI Too Long",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large"
}

/**
 * The path of a request Node's parser refused, when the bytes it received
 * begin with a request line's method and target (a target cut short by the
 * limit still names its prefix): it picks the error format (SCIM's under
 * `/v1/scim`).
 */
const refusedPath = (raw: Buffer | undefined): string | undefined => {
  const start = raw?.subarray(0, 256).toString("latin1")
  const target = start === undefined ? undefined : /^[A-Z]+ (\/[^ ?\r\n]*)/.exec(start)?.[1]
  // `/api/v1/...` is the same interface as `/v1/...` (see `aliasApiV1`).
  return target?.startsWith("/api/v1/") ? target.slice(4) : target
}

/** A complete HTTP/1.1 error response, written straight to a socket Node has not turned into a request. */
const rawErrorResponse = (status: number, failure: EdgeError, path?: string) => {
  const { body, contentType } = errorBodyFor(path, status, failure.error, failure._tag)
  const text = JSON.stringify(body)
  return `HTTP/1.1 ${status} ${statusText[status] ?? "Error"}\r\nContent-Type: ${contentType}\r\nContent-Length: ${
    Buffer.byteLength(text)
  }\r\nConnection: close\r\n\r\n${text}`
}

/** How Node's parser refusals are answered, by error code. */
const clientErrorAnswer = (code: string | undefined): readonly [number, EdgeError] => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [
        431,
        new Errors.HeadersTooLarge({
          error: "Request headers (or the request line) too large: send at most 16 KiB of them."
        })
      ]
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [
        408,
        new Errors.RequestTimeout({
          error: "The request was not received in time: send the headers and body without pausing."
        })
      ]
    default:
      return [400, new Errors.InvalidRequest({ error: "Malformed HTTP request: the server could not parse it." })]
  }
}

/**
 * The Node HTTP server: slow clients are cut (`headersTimeout`,
 * `requestTimeout`, checked every second), one address may hold at most
 * `maxConnectionsPerIp` connections, and what Node's parser refuses (a
 * malformed request line, headers over 16 KiB, a timeout) is answered with
 * the contract's JSON error body rather than Node's empty one.
 */
export const makeNodeServer = (limits: NodeServerLimits): Server => {
  const server = createServer({
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: 1_000
  })
  const perAddress = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown"
    const open = (perAddress.get(address) ?? 0) + 1
    if (open > limits.maxConnectionsPerIp) {
      socket.end(rawErrorResponse(
        429,
        new Errors.TooManyConnections({
          error: `Too many open connections from ${address}: at most ${limits.maxConnectionsPerIp}.`
        })
      ))
      socket.destroySoon()
      return
    }
    perAddress.set(address, open)
    socket.once("close", () => {
      const left = (perAddress.get(address) ?? 1) - 1
      if (left <= 0) perAddress.delete(address)
      else perAddress.set(address, left)
    })
  })
  server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
    const [status, failure] = clientErrorAnswer(error.code)
    socket.end(rawErrorResponse(status, failure, refusedPath(error.rawPacket)))
  })
  return server
}
