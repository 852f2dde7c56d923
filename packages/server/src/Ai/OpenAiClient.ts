/**
 * The HTTP side of an OpenAI-compatible provider (OpenAI, Azure OpenAI, vLLM,
 * Ollama, llama.cpp server, ...): JSON and Server-Sent-Events requests to
 * `OPENAI_BASE_URL`, with the key as a bearer token. Every failure is an
 * `AiError` whose reason says what went wrong (authentication, rate limit,
 * provider error, network, malformed response); transient ones (network,
 * 429, 5xx) are retried twice with backoff before the response starts, and a
 * provider that keeps failing trips the outbound circuit breaker, when the
 * process provides one, instead of being hammered.
 */
import { Context, Duration, Effect, Layer, Option, Redacted, Schedule, Schema, Stream } from "effect"
import * as AiError from "effect/ai/AiError"
import * as Sse from "effect/encoding/Sse"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as CircuitBreaker from "effect/persistence/CircuitBreaker"
import { OutboundBreaker } from "../Platform/OutboundBreaker.ts"

export interface OpenAiConfig {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`; paths are appended to it. */
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly model: string
  readonly embeddingModel: string
  /** How long to wait for the response to start (default 60 s). */
  readonly timeout?: Duration.Input | undefined
}

const module = "OpenAiCompatible"

const ErrorBody = Schema.Struct({
  error: Schema.optional(Schema.Union([
    Schema.String,
    Schema.Struct({ message: Schema.optional(Schema.NullOr(Schema.String)) })
  ]))
})
const decodeErrorBody = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

/** The provider's own words for a failed request, if its body has them. */
const describeBody = (body: string): string | undefined => {
  const decoded = decodeErrorBody(body)
  if (Option.isSome(decoded)) {
    const error = decoded.value.error
    if (typeof error === "string") return error
    if (error?.message) return error.message
  }
  const text = body.trim()
  return text.length === 0 ? undefined : text.slice(0, 300)
}

const fail = (method: string, reason: AiError.AiErrorReason) => AiError.make({ module, method, reason })

const fromHttpClientError = (method: string) => (error: HttpClientError.HttpClientError): AiError.AiError => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError":
    case "EncodeError":
    case "InvalidUrlError":
      return fail(method, AiError.NetworkError.fromRequestError(reason))
    default:
      return fail(method, new AiError.InvalidResponseError({ description: reason.message }))
  }
}

/** A non-2xx response as the reason its status means, with the provider's message. */
const fromStatus = (method: string, response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(
    Effect.orElseSucceed(response.text, () => ""),
    (body) =>
      Effect.fail(
        fail(method, AiError.reasonFromHttpStatus({ status: response.status, description: describeBody(body) }))
      )
  )

export class OpenAiClient extends Context.Service<OpenAiClient, {
  readonly config: OpenAiConfig
  /** POSTs JSON to `path` and returns the decoded JSON body. */
  readonly postJson: (path: string, body: unknown, method: string) => Effect.Effect<unknown, AiError.AiError>
  /** POSTs JSON to `path` and returns the response's Server-Sent Events once the response has started. */
  readonly postEvents: (
    path: string,
    body: unknown,
    method: string
  ) => Effect.Effect<Stream.Stream<Sse.Event, AiError.AiError>, AiError.AiError>
}>()("@agent-platform/server/Ai/OpenAiClient") {
  static readonly layer = (config: OpenAiConfig): Layer.Layer<OpenAiClient, never, HttpClient.HttpClient> =>
    Layer.effect(OpenAiClient, make(config))
}

/** The client over the current `HttpClient` (and `OutboundBreaker`, if provided). */
export const make = Effect.fnUntraced(function*(config: OpenAiConfig) {
  const baseUrl = config.baseUrl.replace(/\/+$/, "")
  const host = URL.canParse(baseUrl) ? new URL(baseUrl).host : baseUrl
  const breaker = Option.map(yield* Effect.serviceOption(OutboundBreaker), (outbound) => outbound.breaker)
  const timeout = Duration.fromInputUnsafe(config.timeout ?? "60 seconds")
  const client = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest((request) => {
      const withUrl = HttpClientRequest.prependUrl(request, baseUrl)
      return Option.match(config.apiKey, {
        onNone: () => withUrl,
        onSome: (key) => HttpClientRequest.bearerToken(withUrl, Redacted.value(key))
      })
    })
  )

  /** Sends the request until a 2xx response starts, retrying transient failures. */
  const start = (path: string, body: unknown, method: string, accept: string) => {
    const attempt = HttpClientRequest.post(path).pipe(
      HttpClientRequest.accept(accept),
      HttpClientRequest.bodyJsonUnsafe(body),
      client.execute,
      Effect.mapError(fromHttpClientError(method)),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            fail(
              method,
              new AiError.InternalProviderError({ description: `no response within ${Duration.format(timeout)}` })
            )
          )
      }),
      Effect.flatMap((
        response
      ) => (response.status >= 200 && response.status < 300 ? Effect.succeed(response) : fromStatus(method, response))),
      Effect.retry({
        while: (error: AiError.AiError) => error.isRetryable,
        schedule: Schedule.exponential("200 millis"),
        times: 2
      })
    )
    if (Option.isNone(breaker)) return attempt
    return breaker.value.execute(attempt, {
      key: `model:${host}`,
      // A request the provider rejects (bad key, bad request) says nothing about its health.
      classify: (exit) =>
        exit._tag === "Success" || !(exit.cause.reasons.some((r) => r._tag === "Fail" && r.error.isRetryable))
          ? CircuitBreaker.success
          : CircuitBreaker.failure()
    }).pipe(
      Effect.catchTag("CircuitBreakerError", (error) =>
        Effect.fail(fail(
          method,
          new AiError.InternalProviderError({
            description: `the model provider at ${host} failed repeatedly; calls are paused (${error.message})`
          })
        )))
    )
  }

  const postJson = (path: string, body: unknown, method: string) =>
    start(path, body, method, "application/json").pipe(
      Effect.flatMap((response) => response.json),
      Effect.mapError((error) => (AiError.isAiError(error) ? error : fromHttpClientError(method)(error)))
    )

  const postEvents = (path: string, body: unknown, method: string) =>
    Effect.map(start(path, body, method, "text/event-stream"), (response) =>
      response.stream.pipe(
        Stream.mapError(fromHttpClientError(method)),
        Stream.decodeText(),
        Stream.pipeThroughChannel(Sse.decode()),
        Stream.mapError((error) =>
          AiError.isAiError(error)
            ? error
            : fail(
              method,
              new AiError.InvalidResponseError({
                description: `malformed event stream: ${
                  error._tag === "SseError" ? error.message : "unexpected retry directive"
                }`
              })
            )
        )
      ))

  return OpenAiClient.of({ config, postJson, postEvents })
})
