/**
 * `/mcp`: the action catalog over MCP's Streamable HTTP transport (spec
 * 2025-03-26), statelessly — no `Mcp-Session-Id` is issued, so any replica
 * answers any request.
 *
 * - POST carries one JSON-RPC message or a batch. Requests are answered with
 *   `application/json` (one response, or an array for a batch); a body of
 *   only notifications or responses gets 202 with no body.
 * - GET (a server-to-client SSE stream) and DELETE (session end) are 405:
 *   this server sends no requests of its own and keeps no sessions.
 * - Refusals are JSON-RPC errors with the HTTP status of the `/v1`
 *   interface: 401 (no or bad key, with `WWW-Authenticate: Bearer`), 403
 *   (scope, or a browser `Origin` outside `CORS_ORIGINS`: the spec's DNS
 *   rebinding defence), 429 (rate limit, with `Retry-After`), 400 (JSON that
 *   does not parse or spells a lone UTF-16 surrogate, an unsupported
 *   `MCP-Protocol-Version`).
 */
import type { KeyPrincipal } from "@agent-platform/domain"
import { Effect, Option, Schema } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { isUtf8 } from "node:buffer"
import { ServerConfig } from "../Platform/Config.ts"
import { applyLimitHeaders, exceededMessage } from "../Platform/RateLimits.ts"
import { CurrentRequestInfo } from "../Platform/RequestInfo.ts"
import { isWellFormedJson, loneSurrogateMessage, notUtf8Message } from "../Platform/WellFormedJson.ts"
import { ActionsMcp, defaultProtocolVersion, isProtocolVersion, type ProtocolVersion } from "./ActionsMcp.ts"
import * as JsonRpc from "./JsonRpc.ts"
import { McpAuth } from "./McpAuth.ts"

export const mcpPath = "/mcp"

const reply = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers })

const refuse = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  reply(JsonRpc.failure(null, code, message), status, headers)

const parseJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

const methodNotAllowed = Effect.succeed(
  reply(
    JsonRpc.failure(
      null,
      JsonRpc.codes.invalidRequest,
      "Method not allowed: this MCP server is stateless and answers POST only."
    ),
    405,
    { allow: "POST" }
  )
)

/**
 * The answer to one message of the body: a response for a request (or an
 * invalid message), nothing otherwise; `status` is the HTTP status it gets
 * when it is the only message.
 */
type Answer = { readonly response: JsonRpc.Response; readonly status: 200 | 400 | 429 } | undefined

export const McpHttp = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const mcp = yield* ActionsMcp
  const auth = yield* McpAuth
  const config = yield* ServerConfig

  const originAllowed = (origin: string | undefined) =>
    origin === undefined || config.corsOrigins.includes("*") || config.corsOrigins.includes(origin)

  const answer = (key: KeyPrincipal, version: ProtocolVersion) =>
    Effect.fnUntraced(function*(raw: unknown): Effect.fn.Return<Answer> {
      const decoded = JsonRpc.decodeMessage(raw)
      // A request's id is a string or an integer (MCP: never null): with another, the message is neither a
      // valid request nor a notification (it has an id), and gets an answer rather than silence.
      const badId = typeof raw === "object" && raw !== null && "method" in raw && "id" in raw &&
        typeof raw.id !== "string" && !(typeof raw.id === "number" && Number.isInteger(raw.id))
      if (decoded._tag === "Failure" || badId) {
        const id = typeof raw === "object" && raw !== null && "id" in raw && !badId &&
            (typeof raw.id === "string" || typeof raw.id === "number")
          ? raw.id
          : null
        return {
          response: JsonRpc.failure(id, JsonRpc.codes.invalidRequest, "Invalid Request: not a JSON-RPC 2.0 message"),
          status: 400
        }
      }
      const message = decoded.success
      if (!JsonRpc.isRequest(message)) return undefined
      const limit = yield* auth.consume(key, message.method)
      yield* applyLimitHeaders(limit)
      if (!limit.allowed) {
        return {
          response: JsonRpc.failure(message.id, JsonRpc.codes.rateLimited, exceededMessage(limit), {
            retry_after_seconds: limit.resetSeconds
          }),
          status: 429
        }
      }
      return { response: yield* mcp.handle({ key, request: message, version }), status: 200 }
    })

  const post = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
    if (!originAllowed(request.headers.origin)) {
      return refuse(
        403,
        JsonRpc.codes.unauthorized,
        `Origin ${request.headers.origin} is not allowed: add it to CORS_ORIGINS.`
      )
    }
    const authenticated = yield* auth.authenticate(request.headers.authorization)
    if (authenticated._tag === "Refused") {
      return refuse(
        authenticated.status,
        JsonRpc.codes.unauthorized,
        authenticated.message,
        authenticated.status === 401 ? { "www-authenticate": "Bearer" } : {}
      )
    }
    const { key } = authenticated
    ;(yield* CurrentRequestInfo).tenantId = key.tenantId
    const requested = request.headers["mcp-protocol-version"]
    if (requested !== undefined && !isProtocolVersion(requested)) {
      return refuse(400, JsonRpc.codes.invalidRequest, `Unsupported MCP-Protocol-Version ${requested}.`)
    }
    const version = requested ?? defaultProtocolVersion
    // Too large or unreadable bodies fail here; the HTTP edge answers them (413, 400).
    const text = yield* Effect.orDie(request.text)
    const parsed = parseJson(text)
    if (Option.isNone(parsed)) return refuse(400, JsonRpc.codes.parseError, "Parse error: the body is not valid JSON.")
    const body = parsed.value
    if (!isWellFormedJson(text, body)) {
      return refuse(400, JsonRpc.codes.parseError, `Parse error: ${loneSurrogateMessage}`)
    }
    if (text.includes("\uFFFD") && !isUtf8(new Uint8Array(yield* Effect.orDie(request.arrayBuffer)))) {
      return refuse(400, JsonRpc.codes.parseError, `Parse error: ${notUtf8Message}`)
    }
    if (Array.isArray(body) && body.length === 0) {
      return refuse(400, JsonRpc.codes.invalidRequest, "Invalid Request: an empty batch.")
    }
    const answers = yield* Effect.forEach(Array.isArray(body) ? body : [body], answer(key, version))
    const responses = answers.flatMap((a) => (a === undefined ? [] : [a.response]))
    if (responses.length === 0) return HttpServerResponse.empty({ status: 202 })
    if (Array.isArray(body)) return reply(responses, 200)
    return reply(responses[0], answers[0]?.status ?? 200)
  })

  yield* router.add("POST", mcpPath, post)
  yield* router.add("GET", mcpPath, methodNotAllowed)
  yield* router.add("DELETE", mcpPath, methodNotAllowed)
}))
