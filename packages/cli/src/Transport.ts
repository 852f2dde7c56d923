/**
 * How the CLI's requests travel: over fetch, each with a deadline for the
 * service's answer (`--timeout`), and — when an answer is none the API
 * declares — a look at `GET /health` to tell "this service failed" from
 * "this is not an Agent Platform server at all".
 */
import { Health } from "@agent-platform/domain"
import { Context, Duration, Effect, Option, Predicate, Ref, Schema } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"

/** The service did not answer within the deadline; the cause of the request's `TransportError`. */
export class RequestTimedOut extends Schema.TaggedError<RequestTimedOut>()("RequestTimedOut", {
  message: Schema.String
}) {}

/** An answer no endpoint of the API gives (e.g. a chat "stream" without a single event). */
export class UnexpectedAnswer extends Schema.TaggedError<UnexpectedAnswer>()("UnexpectedAnswer", {
  message: Schema.String
}) {}

/** The URL answers, but not as an Agent Platform service does. */
export class NotAgentPlatform extends Schema.TaggedError<NotAgentPlatform>()("NotAgentPlatform", {
  message: Schema.String
}) {}

/** The default deadline for an answer, in seconds. */
export const defaultTimeoutSeconds = 30

const seconds = (value: number) => `${Number(value.toFixed(3))} s`

/** The message of a request that got no answer from `origin` within `timeoutSeconds`. */
export const noAnswerMessage = (origin: string, timeoutSeconds: number) =>
  `no answer from ${origin} within ${
    seconds(timeoutSeconds)
  }: the service may be overloaded or stuck; try again, or wait longer with --timeout SECONDS`

/** How a late answer is described inside the transport error. */
export const noAnswerDescription = (timeoutSeconds: number) => `no answer within ${seconds(timeoutSeconds)}`

/**
 * `client` with a deadline on each answer: the response's status and headers
 * must arrive within `timeoutSeconds` (a chat stream may then take as long as
 * it takes). A late answer fails as a `TransportError` caused by
 * {@link RequestTimedOut}, so the client's error type is unchanged.
 */
export const withDeadline = (client: HttpClient.HttpClient, timeoutSeconds: number): HttpClient.HttpClient =>
  HttpClient.transform(client, (response, request) =>
    Effect.timeoutOrElse(response, {
      duration: Duration.seconds(timeoutSeconds),
      orElse: () =>
        Effect.fail(
          new HttpClientError.HttpClientError({
            reason: new HttpClientError.TransportError({
              request,
              description: noAnswerDescription(timeoutSeconds),
              cause: new RequestTimedOut({ message: noAnswerMessage(new URL(request.url).origin, timeoutSeconds) })
            })
          })
        )
    }))

/** The timeout of a failed request, if that is why it failed. */
export const timedOut = (error: unknown): RequestTimedOut | undefined =>
  HttpClientError.isHttpClientError(error) && error.reason._tag === "TransportError" &&
    error.reason.cause instanceof RequestTimedOut
    ? error.reason.cause
    : undefined

/**
 * The URL this run talks to, once a command has chosen it: failures are
 * explained against it (see {@link recognize}).
 */
export class ChosenUrl extends Context.Service<ChosenUrl, Ref.Ref<Option.Option<string>>>()(
  "@agent-platform/cli/Transport/ChosenUrl"
) {}

/**
 * An answer the client could not take as the API's: a status the endpoint
 * does not declare, a body that does not decode, or a chat stream or download
 * that is not one. Such an answer may come from another server entirely.
 */
const isForeignAnswer = (error: unknown): boolean => {
  if (Schema.isSchemaError(error) || error instanceof UnexpectedAnswer) return true
  if (HttpClientError.isHttpClientError(error)) {
    const reason = error.reason._tag
    return reason === "StatusCodeError" || reason === "DecodeError" || reason === "EmptyBodyError"
  }
  return (Predicate.isTagged(error, "ChatStreamError") || Predicate.isTagged(error, "DownloadFailed")) &&
    Predicate.hasProperty(error, "reason") && (error.reason === "UnexpectedAnswer" || error.reason === "InvalidEvent")
}

const isHealthReport = Schema.is(Schema.Union([Health.HealthOk, Health.HealthDegraded]))

/** A gateway's answer (502, 503, 504): the service may be ours behind a proxy that cannot reach it. */
const gatewayStatuses: ReadonlyArray<number> = [502, 503, 504]

/**
 * `NotAgentPlatform` when `error` is an answer the API does not give and the
 * URL's `GET /health` is not an Agent Platform health report either; else
 * `error` itself (the service is ours, or cannot be asked).
 */
export const recognize = (error: unknown): Effect.Effect<unknown, never, HttpClient.HttpClient | ChosenUrl> =>
  Effect.gen(function*() {
    if (!isForeignAnswer(error)) return error
    const url = yield* Ref.get(yield* ChosenUrl)
    if (Option.isNone(url)) return error
    const client = yield* HttpClient.HttpClient
    const probe = yield* withDeadline(client, 10).get(`${url.value}/health`).pipe(
      Effect.flatMap((response) =>
        response.json.pipe(
          Effect.map((body) => ({ response, ours: isHealthReport(body) })),
          Effect.orElseSucceed(() => ({ response, ours: false }))
        )
      ),
      Effect.option
    )
    if (Option.isNone(probe) || probe.value.ours || gatewayStatuses.includes(probe.value.response.status)) return error
    const type = probe.value.response.headers["content-type"]?.split(";")[0]
    return new NotAgentPlatform({
      message: `${url.value} is not an Agent Platform server: GET /health answered HTTP ${probe.value.response.status}${
        type === undefined ? "" : ` (${type})`
      } instead of its health report. Check --url or AGENT_PLATFORM_URL.`
    })
  })
