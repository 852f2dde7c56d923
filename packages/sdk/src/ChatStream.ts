/**
 * The chat stream (POST /v1/chat/completions) as typed events: an Effect
 * `Stream` for Effect users, an async iterator for Promise users. The
 * Server-Sent Events are parsed with eventsource-parser and each `data:`
 * payload decoded with the domain's `ChatEvent` schema; `[DONE]` ends it.
 * Errors before the stream starts arrive as the API's typed errors.
 */
import { Chat, Errors } from "@agent-platform/domain"
import { Effect, Schema, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { createParser, type EventSourceMessage } from "eventsource-parser"

export interface ChatOptions {
  readonly baseUrl: string
  /** An API key with the `chat` scope. */
  readonly apiKey: string
  readonly headers?: Readonly<Record<string, string>> | undefined
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

/** The stream broke: the connection dropped, or the server sent something that is not a chat event. */
export class ChatStreamError extends Schema.TaggedError<ChatStreamError>()("ChatStreamError", {
  error: Schema.String
}) {}

const decodeEvent = Schema.decodeUnknownEffect(Schema.fromJsonString(Chat.ChatEvent))
const decodeRequestError = Schema.decodeUnknownEffect(Schema.fromJsonString(ChatRequestError))

/** The events of one chat turn; the stream starts when run. Needs an `HttpClient`. */
export const chatStream = (
  options: ChatOptions,
  request: Chat.ChatRequest
): Stream.Stream<Chat.ChatEvent, ChatRequestError | ChatStreamError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* HttpClientRequest.post(`${options.baseUrl.replace(/\/+$/, "")}/v1/chat/completions`).pipe(
      HttpClientRequest.bearerToken(options.apiKey),
      HttpClientRequest.setHeaders({ accept: "text/event-stream", ...options.headers }),
      HttpClientRequest.bodyJsonUnsafe(request),
      client.execute,
      Effect.mapError((cause) => new ChatStreamError({ error: `cannot reach ${options.baseUrl}: ${cause.message}` }))
    )
    if (response.status !== 200) {
      const body = yield* Effect.orElseSucceed(response.text, () => "")
      return yield* decodeRequestError(body).pipe(
        Effect.catch(() =>
          Effect.fail(
            new ChatStreamError({ error: `the server answered HTTP ${response.status}: ${body.slice(0, 200)}` })
          )
        ),
        Effect.flatMap(Effect.fail)
      )
    }
    return Stream.suspend(() => {
      let pending: Array<EventSourceMessage> = []
      const parser = createParser({ onEvent: (event) => pending.push(event) })
      return response.stream.pipe(
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
            Effect.mapError(() => new ChatStreamError({ error: `not a chat event: ${event.data.slice(0, 200)}` }))
          )
        ),
        Stream.mapError((error) =>
          error._tag === "ChatStreamError"
            ? error
            : new ChatStreamError({ error: `the stream broke: ${error.message}` })
        )
      )
    })
  }))

/**
 * The same events as an async iterator, for Promise users:
 * `for await (const event of chat({ baseUrl, apiKey }, { message: "hi" })) { ... }`.
 * A failure is thrown as the typed error (`_tag`, `error`).
 */
export const chat = (options: ChatOptions, request: Chat.ChatRequest): AsyncIterable<Chat.ChatEvent> =>
  Stream.toAsyncIterable(chatStream(options, request).pipe(Stream.provide(FetchHttpClient.layer)))

/** The text of a finished turn: its `{text}` tokens concatenated. */
export const collectText = (events: ReadonlyArray<Chat.ChatEvent>): string =>
  events.map((event) => ("text" in event ? event.text : "")).join("")
