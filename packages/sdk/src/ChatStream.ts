/**
 * The chat stream (POST /v1/chat/completions) as typed events: an Effect
 * `Stream` for Effect users, an async iterator for Promise users. The
 * Server-Sent Events are parsed with eventsource-parser and each `data:`
 * payload decoded with the domain's `ChatEvent` schema; `[DONE]` ends it.
 *
 * Failures, for Effect users (`chatStream`): an error the API declares before
 * the stream starts arrives as the domain's typed error (`NotFound`,
 * `Unauthenticated`, ... with the service's text in `error`, as from the
 * Effect client); anything else as a {@link ChatStreamError} whose `reason`
 * says what happened. For Promise users (`chat`) the same failures reject
 * with the Promise client's classes (see `PlatformError.ts`).
 */
import { Chat, Errors } from "@agent-platform/domain"
import { type Duration, Effect, Schema, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { defaultTimeout, withTimeout } from "./Client.ts"
import { describeFailure, PlatformError, reasonOf, toPlatformError, UnexpectedResponse } from "./PlatformError.ts"

export interface ChatOptions {
  readonly baseUrl: string
  /** An API key with the `chat` scope. */
  readonly apiKey: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * How long to wait for the answer to start (its status and headers). Once
   * it has started, the stream takes as long as the turn does (the service
   * sends a `: ping` every 15 seconds meanwhile). `chat` waits 30 seconds by
   * default, like the Promise client; `chatStream` waits only when given one
   * (it uses the `HttpClient` you provide as it is).
   */
  readonly timeout?: Duration.Input | undefined
}

/** The errors the API answers before a stream starts. */
const ChatRequestError = Schema.Union([
  Errors.InvalidRequest,
  Errors.Unauthenticated,
  Errors.ScopeMissing,
  Errors.NotFound,
  Errors.RateLimited,
  Errors.NotImplemented
])
export type ChatRequestError = typeof ChatRequestError.Type

/**
 * The stream failed without an error the API declares. `reason` says how:
 * - `Unreachable`: no answer (connection refused or reset, unknown host, invalid URL);
 * - `Timeout`: no answer within `timeout`;
 * - `UnexpectedAnswer`: an answer the contract does not describe (an undeclared
 *   status or body, or not an event stream): probably not an Agent Platform service;
 * - `InvalidEvent`: the stream carried something that is not a chat event;
 * - `BrokeOff`: the stream broke off before `[DONE]`.
 *
 * `status` is the HTTP status when an answer came, `message` one line saying
 * what to do, `cause` the transport's or decoder's own error.
 */
export class ChatStreamError extends Schema.TaggedError<ChatStreamError>()("ChatStreamError", {
  reason: Schema.Literals(["Unreachable", "Timeout", "UnexpectedAnswer", "InvalidEvent", "BrokeOff"]),
  status: Schema.optional(Schema.Number),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  /** The same text as `message`; where earlier versions put it. */
  get error(): string {
    return this.message
  }
}

/**
 * What `chat` rejects with when the stream broke off, or carried something
 * that is not a chat event, after the answer started (`status` 200). `_tag`
 * stays `ChatStreamError`, as in earlier versions.
 */
export class ChatStreamBrokenError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super({ _tag: "ChatStreamError", status: 200, message, cause })
  }
}

const decodeEvent = Schema.decodeUnknownEffect(Schema.fromJsonString(Chat.ChatEvent))
const decodeRequestError = Schema.decodeUnknownEffect(Schema.fromJsonString(ChatRequestError))

/** No answer: the request's transport failed (the Promise client's text, one line). */
const noAnswer = (error: HttpClientError.HttpClientError) => {
  const { reason, status, text } = describeFailure(error)
  return new ChatStreamError({ reason, status, message: text, cause: error })
}

const preview = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text)

/** The events of one chat turn; the stream starts when run. Needs an `HttpClient`. */
export const chatStream = (
  options: ChatOptions,
  request: Chat.ChatRequest
): Stream.Stream<Chat.ChatEvent, ChatRequestError | ChatStreamError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.gen(function*() {
    const provided = yield* HttpClient.HttpClient
    const client = options.timeout === undefined ? provided : withTimeout(options.timeout)(provided)
    const url = `${options.baseUrl.replace(/\/+$/, "")}/v1/chat/completions`
    const response = yield* HttpClientRequest.post(url).pipe(
      HttpClientRequest.bearerToken(options.apiKey),
      HttpClientRequest.setHeaders({ accept: "text/event-stream", ...options.headers }),
      HttpClientRequest.bodyJsonUnsafe(request),
      client.execute,
      Effect.mapError(noAnswer)
    )
    const unexpected = (what: string) =>
      new ChatStreamError({
        reason: "UnexpectedAnswer",
        status: response.status,
        message: `${url} answered HTTP ${response.status} ${what}: is it an Agent Platform service?`
      })
    if (response.status !== 200) {
      const body = yield* Effect.orElseSucceed(response.text, () => "")
      return yield* decodeRequestError(body).pipe(
        Effect.catch(() => Effect.fail(unexpected(`with a body this client does not understand (${preview(body)})`))),
        Effect.flatMap(Effect.fail)
      )
    }
    const contentType = response.headers["content-type"] ?? ""
    if (!contentType.startsWith("text/event-stream")) {
      return yield* unexpected(`with ${contentType === "" ? "no content type" : contentType}, not an event stream`)
    }
    return Stream.suspend(() => {
      let pending: Array<EventSourceMessage> = []
      const parser = createParser({ onEvent: (event) => pending.push(event) })
      return response.stream.pipe(
        Stream.mapError((cause) =>
          new ChatStreamError({
            reason: "BrokeOff",
            status: response.status,
            message: `the chat stream from ${url} broke off (${
              reasonOf(cause.reason.cause ?? cause)
            }): the answer is incomplete; its chat's history (GET /v1/chat/history/{chat_id}) shows what was kept, or send the message again`,
            cause
          })
        ),
        Stream.decodeText(),
        Stream.map((chunk) => {
          parser.feed(chunk)
          const events = pending
          pending = []
          return events
        }),
        Stream.flattenIterable,
        Stream.takeWhile((event) => event.data !== "[DONE]"),
        Stream.mapEffect((event) =>
          decodeEvent(event.data).pipe(
            Effect.mapError((cause) =>
              new ChatStreamError({
                reason: "InvalidEvent",
                status: response.status,
                message: `not a chat event from ${url}: ${
                  preview(event.data)
                }; the service may be newer than this SDK: update @agent-platform/sdk`,
                cause
              })
            )
          )
        )
      )
    })
  }))

/** The Promise client's error for a failed chat stream. */
const toChatPlatformError = (error: ChatRequestError | ChatStreamError): PlatformError => {
  if (error._tag !== "ChatStreamError") return toPlatformError(error)
  switch (error.reason) {
    case "Unreachable":
    case "Timeout":
      return toPlatformError(error.cause)
    case "UnexpectedAnswer":
      return new UnexpectedResponse(error.status, error.message, error.cause)
    case "InvalidEvent":
    case "BrokeOff":
      return new ChatStreamBrokenError(error.message, error.cause)
  }
}

/**
 * The same events as an async iterator, for Promise users:
 * `for await (const event of chat({ baseUrl, apiKey }, { message: "hi" })) { ... }`.
 * A failure rejects like a Promise client call: `ApiError` for an error the
 * API declares (`_tag` `Unauthenticated`, `NotFound`, ..., with `status`,
 * `body` and the service's message), `ConnectionError` or `TimeoutError`
 * when no answer came, `UnexpectedResponse` for an answer that is not this
 * service's, and `ChatStreamBrokenError` when the stream broke off or carried
 * something that is not a chat event.
 */
export const chat = (options: ChatOptions, request: Chat.ChatRequest): AsyncIterable<Chat.ChatEvent> =>
  Stream.toAsyncIterable(
    chatStream({ ...options, timeout: options.timeout ?? defaultTimeout }, request).pipe(
      Stream.mapError(toChatPlatformError),
      Stream.provide(FetchHttpClient.layer)
    )
  )

/** The text of a finished turn: its `{text}` tokens concatenated. */
export const collectText = (events: ReadonlyArray<Chat.ChatEvent>): string =>
  events.map((event) => ("text" in event ? event.text : "")).join("")
