/**
 * One outbound HTTP call to a tenant's system (an action, a webhook
 * delivery, a Web Push), with the limits that keep a slow or hostile target
 * from hurting the platform: the SSRF guard, a per-call timeout
 * (`ACTIONS_TIMEOUT_MS`, covering connect, redirects and body), a response
 * size cap (`ACTIONS_MAX_RESPONSE_BYTES`, read as a stream and cut off),
 * redirects followed only to the same host, and the circuit breaker of the
 * target host for the calling tenant (connection errors, timeouts and 5xx
 * count as failures; an open circuit fails fast without calling). Each
 * tenant's calls to a host are counted apart: one tenant whose action or
 * webhook keeps failing against a shared host (a SaaS API) opens only its
 * own circuit, never another tenant's.
 *
 * Calls go through undici's dispatcher (the HTTP/1.1 client of Node's own
 * `fetch`, at its lowest level: a handler per request, no streams), whose
 * pool per origin keeps connections alive (at most `maxSocketsPerHost`): a
 * webhook worker sending thousands of deliveries a second to one receiver
 * reuses its connections, and a call costs less CPU than on `node:http`'s
 * agent and streams (about 40 % less client self time in a CPU profile of
 * `bench:webhooks`). Its sockets resolve through the guard's `lookup`, so the
 * address connected to is one the guard checked. Importing undici makes its
 * Agent the process's global `fetch` dispatcher unless one is set already
 * (Node 20's own `fetch` is undici 6 too, so nothing else changes).
 *
 * The circuit breaker's bookkeeping costs as much as the call itself, so a
 * host whose last outcome was a success (and whose circuit has not left
 * Closed since) is called without asking it first: a success there would
 * only reset a count that is already zero. Its first failure is recorded
 * with the breaker at once, and until a success again every call goes
 * through the breaker, which counts, opens and fails fast as before.
 */
import { Context, Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import * as CircuitBreaker from "effect/persistence/CircuitBreaker"
import * as Undici from "undici"
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
  /** Whose call it is: the circuit breaker counts each tenant's calls to a host apart. */
  readonly tenantId: string
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
  readonly contentType: string | undefined
  readonly location: string | undefined
  readonly body: Uint8Array
}

/** The one value of a response header, by its lowercase name. */
const headerValue = (headers: Record<string, string | Array<string>>, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

export class OutboundHttp extends Context.Service<OutboundHttp, {
  readonly send: (request: OutboundRequest, options: SendOptions) => Effect.Effect<OutboundResponse, OutboundFailure>
}>()("@agent-platform/server/Actions/OutboundHttp") {
  static readonly layer = Layer.effect(
    OutboundHttp,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const guard = yield* OutboundGuard
      const { breaker } = yield* OutboundBreaker
      const timeoutMs = config.actionsTimeoutMs
      const dispatcher = new Undici.Agent({
        // Connecting is bounded by the call's deadline; headers and body by the call's own timer (see `hop`).
        connect: { lookup: guard.lookup, timeout: timeoutMs },
        headersTimeout: 0,
        bodyTimeout: 0,
        connections: maxSocketsPerHost
      })
      // Its sockets closed with the layer's scope.
      yield* Effect.addFinalizer(() => Effect.promise(() => dispatcher.destroy()))

      // Circuits (a tenant's calls to a host) whose last recorded outcome was a success; any transition out of
      // Closed (another caller of the shared breaker may cause one) takes the circuit out.
      const healthy = new Set<string>()
      yield* breaker.transitions.pipe(
        Stream.runForEach((transition) => Effect.sync(() => healthy.delete(transition.key))),
        Effect.forkScoped
      )
      const remember = (circuit: string, exit: Exit.Exit<OutboundResponse, OutboundFailure>) =>
        Effect.sync(() => {
          const outcome = classify(exit)
          if (outcome._tag === "Success") healthy.add(circuit)
          else if (outcome._tag === "Failure") healthy.delete(circuit)
        })

      /** The call under its circuit's breaker (see above for the healthy circuit's shortcut). */
      const underBreaker = (call: Effect.Effect<OutboundResponse, OutboundFailure>, circuit: string) => {
        if (!healthy.has(circuit)) {
          return breaker.execute(Effect.onExit(call, (exit) => remember(circuit, exit)), { key: circuit, classify })
        }
        return Effect.flatMap(Effect.exit(call), (exit) => {
          if (classify(exit)._tag !== "Failure") return exit
          healthy.delete(circuit)
          // Recorded as if the breaker had admitted it (the call was made while the circuit was closed).
          return Effect.flatMap(Effect.exit(breaker.execute(exit, { key: circuit, classify })), () => exit)
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
       * One request on the dispatcher, failed with a timeout at `deadline`;
       * the answer's body is read up to `limit` (a redirect to follow is
       * drained unread). Interrupting it aborts the request and closes its
       * connection.
       */
      const hop = (
        url: URL,
        method: OutboundMethod,
        headers: Record<string, string>,
        body: Uint8Array | string | undefined,
        limit: ResponseLimit,
        deadline: number,
        follows: (status: number, location: string | undefined) => boolean
      ) =>
        Effect.callback<Hop, OutboundFailure>((resume) => {
          const host = url.host
          // Set once the request is on a connection; until then `done` keeps it from being written.
          let abort: ((error?: Error) => void) | undefined
          let done = false
          const finish = (effect: Effect.Effect<Hop, OutboundFailure>) => {
            if (done) return
            done = true
            clearTimeout(timer)
            resume(effect)
          }
          const fail = (error: OutboundFailure) => {
            finish(Effect.fail(error))
            abort?.()
          }
          const timer = setTimeout(() => fail(timedOut(host)), Math.max(0, deadline - Date.now()))
          const tooLarge = () =>
            new OutboundFailure({
              reason: "too_large",
              message: `the response of ${host} exceeds ${limit.maxBytes} bytes (ACTIONS_MAX_RESPONSE_BYTES)`
            })
          let status = 0
          let contentType: string | undefined
          let location: string | undefined
          let following = false
          const chunks: Array<Buffer> = []
          let size = 0
          const answer = () =>
            finish(Effect.succeed({
              status,
              contentType,
              location,
              body: following ? empty : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
            }))
          dispatcher.dispatch({
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method,
            headers,
            body: body ?? null
          }, {
            onConnect: (abortRequest) => {
              abort = abortRequest
              if (done) abortRequest()
            },
            onError: (error) =>
              fail(
                error instanceof Undici.errors.InvalidArgumentError
                  // Refused before anything is sent (a header value with a line break, ...).
                  ? new OutboundFailure({ reason: "refused", message: `request to ${host} not sent: ${error.message}` })
                  : fromNodeError(host, error)
              ),
            onHeaders: (statusCode, rawHeaders) => {
              // An informational (1xx) answer comes before the real one.
              if (statusCode < 200) return true
              const parsed = Undici.util.parseHeaders(rawHeaders)
              status = statusCode
              contentType = headerValue(parsed, "content-type")
              location = headerValue(parsed, "location")
              following = follows(status, location)
              const declared = Number(headerValue(parsed, "content-length"))
              if (!following && limit.beyond === "fail" && Number.isFinite(declared) && declared > limit.maxBytes) {
                fail(tooLarge())
              }
              return true
            },
            onData: (chunk) => {
              if (following || done) return true
              const room = limit.maxBytes - size
              if (chunk.length <= room) {
                chunks.push(chunk)
                size += chunk.length
                return true
              }
              // Stop reading: the rest is never buffered, and the connection is not reused.
              if (limit.beyond === "fail") {
                fail(tooLarge())
                return false
              }
              chunks.push(chunk.subarray(0, room))
              size += room
              answer()
              abort?.()
              return false
            },
            onComplete: answer
          })
          return Effect.sync(() => {
            done = true
            clearTimeout(timer)
            abort?.()
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
        const follows = (status: number, location: string | undefined) =>
          maxRedirects > 0 && isRedirect(status) && location !== undefined
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
          }
          const answer = yield* hop(url, method, headers, payload, limit, deadline, follows)
          const location = answer.location
          if (!follows(answer.status, location) || location === undefined) {
            return { status: answer.status, contentType: answer.contentType, body: answer.body }
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

      const send = (input: OutboundRequest, options: SendOptions) =>
        Effect.gen(function*() {
          if (!URL.canParse(input.url)) {
            return yield* new OutboundFailure({ reason: "refused", message: `not a valid URL: ${input.url}` })
          }
          const url = new URL(input.url)
          const deadline = Date.now() + timeoutMs
          // Resolving a name can hang: bounded by the deadline. With internal targets allowed, nothing is resolved.
          yield* guard.allowPrivateNetworks ? checked(url) : within(checked(url), deadline, url.host)
          const limit = options.responseLimit ?? { maxBytes: config.actionsMaxResponseBytes, beyond: "fail" }
          const call = exchange(url, input, options.maxRedirects ?? defaultMaxRedirects, limit, deadline)
          const circuit = `${options.tenantId} ${url.host}`
          return yield* underBreaker(call, circuit).pipe(
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
