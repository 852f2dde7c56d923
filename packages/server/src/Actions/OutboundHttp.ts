/**
 * One outbound HTTP call to a tenant's system (an action, a webhook
 * delivery), with the limits that keep a slow or hostile target from hurting
 * the platform: the SSRF guard, a per-call timeout (`ACTIONS_TIMEOUT_MS`,
 * covering connect, redirects and body), a response size cap
 * (`ACTIONS_MAX_RESPONSE_BYTES`, read as a stream and cut off), redirects
 * followed only to the same host, and the circuit breaker of the target host
 * (connection errors, timeouts and 5xx count as failures; an open circuit
 * fails fast without calling).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Duration, Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as CircuitBreaker from "effect/persistence/CircuitBreaker"
import { ServerConfig } from "../Platform/Config.ts"
import { OutboundBreaker } from "../Platform/OutboundBreaker.ts"
import { OutboundGuard, refusedLookupCode } from "./OutboundGuard.ts"

export type OutboundMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface OutboundRequest {
  readonly method: OutboundMethod
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Sent byte for byte (a webhook signature covers exactly these bytes); `bytes` for a binary body (an encrypted Web Push). */
  readonly body?:
    | { readonly contentType: string; readonly text: string }
    | { readonly contentType: string; readonly bytes: Uint8Array }
    | undefined
}

/** The target's answer, whatever its status. */
export interface OutboundResponse {
  readonly status: number
  readonly contentType: string | undefined
  readonly body: Uint8Array
}

export const OutboundFailureReason = Schema.Literals([
  "refused",
  "timeout",
  "connection",
  "circuit_open",
  "redirect",
  "too_large"
])
export type OutboundFailureReason = typeof OutboundFailureReason.Type

/** The call did not produce a usable answer; `message` is written for the tenant's administrator. */
export class OutboundFailure extends Schema.TaggedError<OutboundFailure>()("OutboundFailure", {
  reason: OutboundFailureReason,
  message: Schema.String
}) {}

/**
 * The status code a failure is reported with where no remote status exists:
 * 504 for a timeout, 503 for an open circuit, 502 for everything else.
 */
export const failureStatusCode = (reason: OutboundFailureReason): number =>
  reason === "timeout" ? 504 : reason === "circuit_open" ? 503 : 502

/** How much of a response body to read, and what to do with a longer one. */
export interface ResponseLimit {
  readonly maxBytes: number
  readonly beyond: "fail" | "truncate"
}

export interface SendOptions {
  /** Same-host redirects to follow; 0 returns a 3xx as the answer. Default 3. */
  readonly maxRedirects?: number | undefined
  /** Default: fail beyond `ACTIONS_MAX_RESPONSE_BYTES`. */
  readonly responseLimit?: ResponseLimit | undefined
}

const defaultMaxRedirects = 3

const isRedirect = (status: number) =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308

/** The circuit breaker counts what says the host is unwell, not what says the caller is wrong. */
const classify = (exit: Exit.Exit<OutboundResponse, OutboundFailure>): CircuitBreaker.Outcome => {
  if (Exit.isSuccess(exit)) return exit.value.status >= 500 ? CircuitBreaker.failure() : CircuitBreaker.success
  return Option.match(Exit.findErrorOption(exit), {
    onNone: () => CircuitBreaker.ignored,
    onSome: (error) =>
      error.reason === "timeout" || error.reason === "connection"
        ? CircuitBreaker.failure()
        : error.reason === "refused"
        ? CircuitBreaker.ignored
        : CircuitBreaker.success
  })
}

const causeMessage = (cause: unknown): string =>
  cause instanceof AggregateError && cause.errors.length > 0
    ? cause.errors.map(causeMessage).join("; ")
    : cause instanceof Error
    ? cause.message
    : String(cause)

const fromClientError = (host: string) => (error: HttpClientError.HttpClientError): OutboundFailure => {
  const cause = error.reason.cause
  if (typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === refusedLookupCode) {
    return new OutboundFailure({ reason: "refused", message: causeMessage(cause) })
  }
  const detail = cause === undefined ? error.reason._tag : causeMessage(cause)
  return new OutboundFailure({ reason: "connection", message: `connection to ${host} failed: ${detail}` })
}

export class OutboundHttp extends Context.Service<OutboundHttp, {
  readonly send: (request: OutboundRequest, options?: SendOptions) => Effect.Effect<OutboundResponse, OutboundFailure>
}>()("@agent-platform/server/Actions/OutboundHttp") {
  static readonly layer = Layer.effect(
    OutboundHttp,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const guard = yield* OutboundGuard
      const { breaker } = yield* OutboundBreaker
      // Sockets resolve through the guard, so the address connected to is one the guard checked;
      // kept alive per host, so repeated calls (webhook deliveries) reuse their connections.
      const agent = yield* NodeHttpClient.makeAgent({ lookup: guard.lookup, keepAlive: true })
      const client = (yield* Effect.provideService(NodeHttpClient.makeNodeHttp, NodeHttpClient.HttpAgent, agent)).pipe(
        HttpClient.withScope
      )
      const timeout = Duration.millis(config.actionsTimeoutMs)

      const checked = (url: URL) =>
        guard.check(url).pipe(
          Effect.mapError((refused) => new OutboundFailure({ reason: "refused", message: refused.message }))
        )

      /** Reads at most `limit.maxBytes` of the body, then stops reading: fails or keeps what it has, as `limit` says. */
      const readBody = Effect.fnUntraced(function*(
        response: HttpClientResponse.HttpClientResponse,
        host: string,
        limit: ResponseLimit
      ) {
        const tooLarge = new OutboundFailure({
          reason: "too_large",
          message: `the response of ${host} exceeds ${limit.maxBytes} bytes (ACTIONS_MAX_RESPONSE_BYTES)`
        })
        const declared = Number(response.headers["content-length"])
        if (limit.beyond === "fail" && Number.isFinite(declared) && declared > limit.maxBytes) return yield* tooLarge
        const chunks: Array<Uint8Array> = []
        let size = 0
        let exceeded = false
        yield* response.stream.pipe(
          Stream.mapError(fromClientError(host)),
          Stream.runForEachWhile((chunk) =>
            Effect.sync(() => {
              const room = limit.maxBytes - size
              if (chunk.length > room) {
                exceeded = true
                chunks.push(chunk.subarray(0, room))
                return false
              }
              chunks.push(chunk)
              size += chunk.length
              return true
            })
          )
        )
        if (exceeded && limit.beyond === "fail") return yield* tooLarge
        return Buffer.concat(chunks)
      })

      /** The request and its same-host redirects; the scope aborts whatever is still open. */
      const exchange = Effect.fnUntraced(
        function*(start: URL, input: OutboundRequest, maxRedirects: number, limit: ResponseLimit) {
          let url = start
          let method: OutboundMethod = input.method
          let body = input.body
          for (let redirects = 0;; redirects++) {
            let request = HttpClientRequest.make(method)(url, { headers: input.headers ?? {} })
            if (body !== undefined) {
              request = "bytes" in body
                ? HttpClientRequest.bodyUint8Array(request, body.bytes, body.contentType)
                : HttpClientRequest.bodyText(request, body.text, body.contentType)
            }
            const response = yield* client.execute(request).pipe(Effect.mapError(fromClientError(start.host)))
            const location = response.headers["location"]
            if (maxRedirects === 0 || !isRedirect(response.status) || location === undefined) {
              return {
                status: response.status,
                contentType: response.headers["content-type"],
                body: yield* readBody(response, start.host, limit)
              } satisfies OutboundResponse
            }
            if (redirects >= maxRedirects) {
              return yield* new OutboundFailure({
                reason: "redirect",
                message: `${start.host} redirected more than ${maxRedirects} times`
              })
            }
            const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined
            if (next === undefined || next.host !== start.host) {
              return yield* new OutboundFailure({
                reason: "redirect",
                message: `redirect from ${start.host} to another host refused (${next?.host ?? location})`
              })
            }
            yield* checked(next)
            // Browsers' rule: 303, and 301/302 after a POST, continue as a GET without a body.
            if (
              response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")
            ) {
              method = "GET"
              body = undefined
            }
            url = next
          }
        }
      )

      const send = (input: OutboundRequest, options?: SendOptions) =>
        Effect.gen(function*() {
          if (!URL.canParse(input.url)) {
            return yield* new OutboundFailure({ reason: "refused", message: `not a valid URL: ${input.url}` })
          }
          const url = new URL(input.url)
          const timedOut = () =>
            new OutboundFailure({
              reason: "timeout",
              message: `${url.host} did not answer within ${config.actionsTimeoutMs} ms (ACTIONS_TIMEOUT_MS)`
            })
          yield* checked(url).pipe(Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(timedOut()) }))
          const limit = options?.responseLimit ?? { maxBytes: config.actionsMaxResponseBytes, beyond: "fail" }
          const call = exchange(url, input, options?.maxRedirects ?? defaultMaxRedirects, limit).pipe(
            Effect.scoped,
            Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(timedOut()) })
          )
          return yield* breaker.execute(call, { key: url.host, classify }).pipe(
            Effect.catchTag("CircuitBreakerError", (error) =>
              Effect.fail(
                new OutboundFailure({
                  reason: "circuit_open",
                  message: error.reason._tag === "CircuitBreakerStoreError"
                    ? `circuit breaker unavailable for ${url.host}: ${error.reason.message}`
                    : `circuit open for ${url.host} after repeated failures; calls fail fast until it recovers`
                })
              ))
          )
        }).pipe(
          // Trace headers stay inside the platform; tenants' systems get none.
          Effect.provideService(HttpClient.TracerPropagationEnabled, false)
        )

      return OutboundHttp.of({ send })
    })
  ).pipe(Layer.provide(OutboundGuard.layer))
}
