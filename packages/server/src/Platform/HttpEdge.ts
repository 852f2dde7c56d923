/**
 * The edge of the HTTP server, applied to every request before routing:
 * request ids, the `/api/v1` alias of the key interface, the body size limit,
 * structured request logs, and the translation of whatever the API layer
 * leaves unhandled (unknown routes, malformed or invalid input, oversized
 * bodies, defects) into the contract's `{error}` bodies.
 */
import { ByteSize, Cause, Effect, Layer } from "effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiError from "effect/http-api/HttpApiError"
import { Knowledge } from "@agent-platform/domain"
import { ServerConfig } from "./Config.ts"
import { CurrentRequestInfo, makeRequestInfo } from "./RequestInfo.ts"
import { describeSchemaError } from "./SchemaErrors.ts"

const validRequestId = /^[A-Za-z0-9._:\-]{1,128}$/

/** Paths whose bodies may exceed the general limit: document ingestion. */
const isIngest = (url: string) => url.startsWith("/v1/knowledge/ingest")

const errorResponse = (status: number, error: string, tag: string) =>
  HttpServerResponse.jsonUnsafe({ error, _tag: tag }, { status })

/**
 * PostgreSQL refuses NUL characters in text (SQLSTATE 22021) and jsonb
 * (22P05). Input that reaches the database with one is the client's mistake,
 * whichever field carried it: a 400, not a 500.
 */
const isUnstorableText = (error: unknown): boolean => {
  const code = (error as { readonly _tag?: string; readonly reason?: { readonly cause?: { readonly code?: unknown } } } | undefined)
  return code?._tag === "SqlError" && (code.reason?.cause?.code === "22021" || code.reason?.cause?.code === "22P05")
}

const partLabel: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Body: "response body",
  Headers: "header",
  Params: "path parameter",
  Payload: "request body",
  Query: "query parameter",
  ResponseHeaders: "response header"
}

/** Turns what the router and the API layer could not answer into a response. */
const recover = (request: HttpServerRequest.HttpServerRequest, requestId: string) =>
(cause: Cause.Cause<unknown>) => {
  for (const reason of cause.reasons) {
    const error = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (HttpApiError.HttpApiSchemaError.is(error) && error.kind !== "Body" && error.kind !== "ResponseHeaders") {
      return Effect.succeed(errorResponse(
        400,
        `Invalid ${partLabel[error.kind]}: ${describeSchemaError(error.cause.issue)}`,
        "InvalidRequest"
      ))
    }
    if (HttpServerError.isHttpServerError(error)) {
      const inner = error.reason
      if (inner._tag === "RouteNotFound") {
        return Effect.succeed(errorResponse(
          404,
          `No route for ${request.method} ${request.url.split("?")[0]}. The API reference is at /docs.`,
          "NotFound"
        ))
      }
      if (inner._tag === "RequestParseError") {
        return Effect.succeed(
          inner.reason === "BodyTooLarge"
            ? errorResponse(413, "Request body too large: send at most 1 MiB (2 MiB of content for ingest).", "PayloadTooLarge")
            : errorResponse(400, "Malformed request body: send valid JSON with Content-Type: application/json.", "InvalidRequest")
        )
      }
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(error)) {
      return Effect.succeed(errorResponse(413, "Request body too large.", "PayloadTooLarge"))
    }
    if (isUnstorableText(error)) {
      return Effect.succeed(errorResponse(
        400,
        "Invalid request body: text must not contain NUL (\\u0000) characters.",
        "InvalidRequest"
      ))
    }
  }
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
  return Effect.logError("Unhandled error while serving a request", cause).pipe(
    Effect.as(errorResponse(
      500,
      `Internal server error (request ${requestId}). Retry later; if it persists, report this request id to the operator.`,
      "InternalServerError"
    ))
  )
}

/** Rewrites `/api/v1/...` to `/v1/...`: the spec shows the key interface at both roots. */
const aliasApiV1 = (request: HttpServerRequest.HttpServerRequest) =>
  request.url.startsWith("/api/v1/") || request.url === "/api/v1"
    ? request.modify({ url: request.url.slice(4) })
    : request

/** The edge middleware, installed for every route. */
export const HttpEdgeLive = HttpRouter.middleware(
  Effect.gen(function*() {
    const config = yield* ServerConfig
    return (httpApp) =>
      Effect.gen(function*() {
        const original = yield* HttpServerRequest.HttpServerRequest
        const request = aliasApiV1(original)
        const incomingId = request.headers["x-request-id"]
        const requestId = incomingId !== undefined && validRequestId.test(incomingId)
          ? incomingId
          : crypto.randomUUID()
        const info = makeRequestInfo(requestId)
        const start = performance.now()
        const maxBody = isIngest(request.url) ? Knowledge.maxContentBytes + 64 * 1024 : config.maxBodyBytes
        const response = yield* httpApp.pipe(
          Effect.catchCause(recover(request, requestId)),
          Effect.provideService(HttpServerRequest.HttpServerRequest, request),
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBody)),
          Effect.provideService(CurrentRequestInfo, info),
          Effect.annotateLogs({ request_id: requestId })
        )
        const durationMs = Math.round((performance.now() - start) * 10) / 10
        yield* Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            request_id: requestId,
            method: request.method,
            path: request.url.split("?")[0],
            status: response.status,
            duration_ms: durationMs,
            tenant_id: info.tenantId ?? null
          })
        )
        return HttpServerResponse.setHeaders(response, { ...info.responseHeaders, "x-request-id": requestId })
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
    exposedHeaders: ["X-Request-Id", "X-Chat-Id", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]
  })
}))

