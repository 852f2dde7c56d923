/**
 * One outbound HTTP call to a tenant's system (an action, a webhook
 * delivery, a Web Push), with the limits that keep a slow or hostile target
 * from hurting the platform: the SSRF guard, a per-call timeout
 * (`ACTIONS_TIMEOUT_MS`, covering connect, redirects and body), a response
 * size cap (`ACTIONS_MAX_RESPONSE_BYTES`, read as a stream and cut off),
 * redirects followed only to the same host, and the circuit breaker of the
 * target host (connection errors, timeouts and 5xx count as failures; an open
 * circuit fails fast without calling).
 *
 * Calls go straight through `node:http`/`node:https` on one keep-alive agent
 * per protocol, whose pool is per host (at most `maxSocketsPerHost`
 * connections each): a webhook worker sending thousands of deliveries a
 * second to one receiver reuses its connections, and a call costs one
 * request, not the layers of a general HTTP client. The agents' sockets
 * resolve through the guard's `lookup`, so the address connected to is one
 * the guard checked.
 *
 * The circuit breaker's bookkeeping costs as much as the call itself, so a
 * host whose last outcome was a success (and whose circuit has not left
 * Closed since) is called without asking it first: a success there would
 * only reset a count that is already zero. Its first failure is recorded
 * with the breaker at once, and until a success again every call goes
 * through the breaker, which counts, opens and fails fast as before.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import * as CircuitBreaker from "effect/persistence/CircuitBreaker"
import type * as Http from "node:http"
import * as NodeHttp from "node:http"
import * as NodeHttps from "node:https"
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

/** Connections kept (and open at once) per target host and protocol. */
export const maxSocketsPerHost = 256

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

const fromNodeError = (host: string, cause: unknown): OutboundFailure => {
  if (typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === refusedLookupCode) {
    return new OutboundFailure({ reason: "refused", message: causeMessage(cause) })
  }
  return new OutboundFailure({ reason: "connection", message: `connection to ${host} failed: ${causeMessage(cause)}` })
}

/** One hop's answer: its body read (up to the limit) unless it is a redirect to follow. */
interface Hop {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Uint8Array
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
      // Destroyed (their sockets closed) with the layer's scope.
      const agents = yield* NodeHttpClient.makeAgent({
        lookup: guard.lookup,
        keepAlive: true,
        maxSockets: maxSocketsPerHost,
        maxFreeSockets: maxSocketsPerHost,
        // The most recently used socket first: fewer sockets stay warm, the rest time out.
        scheduling: "lifo"
      })
      const timeoutMs = config.actionsTimeoutMs

      // Hosts whose last recorded outcome was a success; any transition out of Closed (another caller of
      // the shared breaker may cause one) takes the host out.
      const healthy = new Set<string>()
      yield* breaker.transitions.pipe(
        Stream.runForEach((transition) => Effect.sync(() => healthy.delete(transition.key))),
        Effect.forkScoped
      )
      const remember = (host: string, exit: Exit.Exit<OutboundResponse, OutboundFailure>) =>
        Effect.sync(() => {
          const outcome = classify(exit)
          if (outcome._tag === "Success") healthy.add(host)
          else if (outcome._tag === "Failure") healthy.delete(host)
        })

      /** The call under the host's circuit breaker (see above for the healthy host's shortcut). */
      const underBreaker = (call: Effect.Effect<OutboundResponse, OutboundFailure>, host: string) => {
        if (!healthy.has(host)) {
          return breaker.execute(Effect.onExit(call, (exit) => remember(host, exit)), { key: host, classify })
        }
        return Effect.flatMap(Effect.exit(call), (exit) => {
          if (classify(exit)._tag !== "Failure") return exit
          healthy.delete(host)
          // Recorded as if the breaker had admitted it (the call was made while the circuit was closed).
          return Effect.flatMap(Effect.exit(breaker.execute(exit, { key: host, classify })), () => exit)
        })
      }

      const checked = (url: URL) =>
        guard.check(url).pipe(
          Effect.mapError((refused) => new OutboundFailure({ reason: "refused", message: refused.message }))
        )

      const timedOut = (host: string) =>
        new OutboundFailure({
          reason: "timeout",
          message: `${host} did not answer within ${timeoutMs} ms (ACTIONS_TIMEOUT_MS)`
        })

      /** Fails with a timeout at `deadline` (epoch ms). */
      const within = <A>(effect: Effect.Effect<A, OutboundFailure>, deadline: number, host: string) =>
        effect.pipe(
          Effect.timeoutOrElse({
            duration: Math.max(0, deadline - Date.now()),
            orElse: () => Effect.fail(timedOut(host))
          })
        )

      /**
       * One request on the agent, failed with a timeout at `deadline`; the
       * answer's body is read up to `limit` (a redirect to follow is drained
       * unread). Interrupting it destroys the request and its socket.
       */
      const hop = (
        url: URL,
        method: OutboundMethod,
        headers: Record<string, string>,
        body: Uint8Array | string | undefined,
        limit: ResponseLimit,
        deadline: number,
        follows: (status: number, headers: Http.IncomingHttpHeaders) => boolean
      ) =>
        Effect.callback<Hop, OutboundFailure>((resume) => {
          const host = url.host
          let request: Http.ClientRequest
          try {
            request = (url.protocol === "https:" ? NodeHttps : NodeHttp).request(url, {
              method,
              headers,
              agent: url.protocol === "https:" ? agents.https : agents.http
            })
          } catch (error) {
            // node:http refuses some requests before sending anything (a header value with a line break, ...).
            return resume(Effect.fail(
              new OutboundFailure({ reason: "refused", message: `request to ${host} not sent: ${causeMessage(error)}` })
            ))
          }
          let done = false
          const finish = (effect: Effect.Effect<Hop, OutboundFailure>) => {
            if (done) return
            done = true
            clearTimeout(timer)
            resume(effect)
          }
          const fail = (error: OutboundFailure) => {
            request.destroy()
            finish(Effect.fail(error))
          }
          const timer = setTimeout(() => fail(timedOut(host)), Math.max(0, deadline - Date.now()))
          request.on("error", (error) => fail(fromNodeError(host, error)))
          request.on("response", (response) => {
            const status = response.statusCode ?? 0
            response.on("error", (error) => fail(fromNodeError(host, error)))
            response.on("aborted", () => fail(fromNodeError(host, new Error("the response was cut off"))))
            if (follows(status, response.headers)) {
              response.on("end", () => finish(Effect.succeed({ status, headers: response.headers, body: empty })))
              response.resume()
              return
            }
            const tooLarge = () =>
              new OutboundFailure({
                reason: "too_large",
                message: `the response of ${host} exceeds ${limit.maxBytes} bytes (ACTIONS_MAX_RESPONSE_BYTES)`
              })
            const declared = Number(response.headers["content-length"])
            if (limit.beyond === "fail" && Number.isFinite(declared) && declared > limit.maxBytes) {
              return fail(tooLarge())
            }
            const chunks: Array<Buffer> = []
            let size = 0
            const answer = () =>
              finish(Effect.succeed({
                status,
                headers: response.headers,
                body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
              }))
            response.on("data", (chunk: Buffer) => {
              const room = limit.maxBytes - size
              if (chunk.length <= room) {
                chunks.push(chunk)
                size += chunk.length
                return
              }
              // Stop reading: the rest is never buffered, and the connection is not reused.
              if (limit.beyond === "fail") return fail(tooLarge())
              chunks.push(chunk.subarray(0, room))
              size += room
              answer()
              request.destroy()
            })
            response.on("end", answer)
          })
          request.end(body)
          return Effect.sync(() => {
            done = true
            clearTimeout(timer)
            request.destroy()
          })
        })

      /** The request and its same-host redirects, all before `deadline`. */
      const exchange = Effect.fnUntraced(function*(
        start: URL,
        input: OutboundRequest,
        maxRedirects: number,
        limit: ResponseLimit,
        deadline: number
      ) {
        let url = start
        let method: OutboundMethod = input.method
        let body = input.body
        const follows = (status: number, headers: Http.IncomingHttpHeaders) =>
          maxRedirects > 0 && isRedirect(status) && headers["location"] !== undefined
        for (let redirects = 0;; redirects++) {
          // Names lowercased (HTTP header names are case-insensitive): a tenant's `Content-Type` is replaced, not
          // doubled; the framing headers are the client's own.
          const headers: Record<string, string> = {}
          for (const name in input.headers) {
            const lower = name.toLowerCase()
            if (!framingHeaders.has(lower)) headers[lower] = input.headers[name]!
          }
          let payload: Uint8Array | string | undefined
          if (body !== undefined) {
            payload = "bytes" in body ? body.bytes : body.text
            headers["content-type"] = body.contentType
            headers["content-length"] = String(
              typeof payload === "string" ? Buffer.byteLength(payload) : payload.byteLength
            )
          }
          const answer = yield* hop(url, method, headers, payload, limit, deadline, follows)
          const location = answer.headers["location"]
          if (!follows(answer.status, answer.headers) || location === undefined) {
            return { status: answer.status, contentType: answer.headers["content-type"], body: answer.body }
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
          yield* within(checked(next), deadline, start.host)
          // Browsers' rule: 303, and 301/302 after a POST, continue as a GET without a body.
          if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === "POST")) {
            method = "GET"
            body = undefined
          }
          url = next
        }
      })

      const send = (input: OutboundRequest, options?: SendOptions) =>
        Effect.gen(function*() {
          if (!URL.canParse(input.url)) {
            return yield* new OutboundFailure({ reason: "refused", message: `not a valid URL: ${input.url}` })
          }
          const url = new URL(input.url)
          const deadline = Date.now() + timeoutMs
          // Resolving a name can hang: bounded by the deadline. With internal targets allowed, nothing is resolved.
          yield* guard.allowPrivateNetworks ? checked(url) : within(checked(url), deadline, url.host)
          const limit = options?.responseLimit ?? { maxBytes: config.actionsMaxResponseBytes, beyond: "fail" }
          const call = exchange(url, input, options?.maxRedirects ?? defaultMaxRedirects, limit, deadline)
          return yield* underBreaker(call, url.host).pipe(
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
        })

      return OutboundHttp.of({ send })
    })
  ).pipe(Layer.provide(OutboundGuard.layer))
}

const empty = new Uint8Array(0)

/** Headers that frame the message: set by the client from the body, never taken from the caller. */
const framingHeaders = new Set(["host", "content-length", "transfer-encoding", "connection"])
