/**
 * A room's live frames (`{cursor, messages, presence, room_status}`): an
 * Effect `Stream` for Effect users, an async iterator for Promise users.
 *
 * They arrive over the room WebSocket (`GET /api/chats/{id}/ws`) with the
 * session cookie. When the WebSocket cannot be opened (a proxy that refuses
 * upgrades, an old runtime) or drops, the stream carries on with long polls
 * (`GET /api/chats/{id}/messages?wait=`) from the last cursor it delivered,
 * so no message is lost or repeated. The stream ends after the frame that
 * says `room_status: closed`.
 *
 * Failures, for Effect users (`roomEventsStream`): a refusal the API declares
 * (not a participant, the flag off, an ended session) arrives as the domain's
 * typed error (`NotParticipant`, `Unauthenticated`, ... with the service's
 * text in `error`); anything else as a {@link RoomEventsError} whose `reason`
 * says what happened. For Promise users (`roomEvents`) the same failures
 * reject with the Promise client's classes (see `PlatformError.ts`).
 */
import { Rooms } from "@agent-platform/domain"
import { Effect, Layer, Schema, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Socket from "effect/socket/Socket"
import { make, sessionCookieName } from "./Client.ts"
import {
  ConnectionError,
  describeFailure,
  PlatformError,
  reasonOf,
  TimeoutError,
  toPlatformError,
  UnexpectedResponse
} from "./PlatformError.ts"

export interface RoomEventsOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  /** The session token (the `Service-Token` cookie) of a participant; a browser's own cookie when omitted there. */
  readonly sessionToken?: string | undefined
  /** Start after this cursor (a message `seq`); default 0, from the first message. */
  readonly after?: number | undefined
  /** `auto` (default): WebSocket, falling back to long polling; or one of them only. */
  readonly transport?: "auto" | "websocket" | "poll" | undefined
  /** Seconds each long poll waits for news (1–30; default 25). */
  readonly pollWait?: number | undefined
}

/**
 * The frames stopped without an error the API declares. `reason` says how:
 * - `Unreachable`: no answer (connection refused or reset, unknown host), or
 *   the WebSocket could not be opened (with `transport: "websocket"`);
 * - `Timeout`: no answer in time (a long poll's `pollWait` plus 30 seconds,
 *   or 10 seconds for the WebSocket to open);
 * - `UnexpectedAnswer`: an answer the contract does not describe (an undeclared
 *   status or body): probably not an Agent Platform service;
 * - `InvalidFrame`: the WebSocket carried something that is not a room frame;
 * - `BrokeOff`: the WebSocket closed before the room did.
 *
 * With `transport: "auto"` the WebSocket's own failures only make it carry on
 * by long polling, so they never end the stream. `status` is the HTTP status
 * when an answer came (101 for an opened WebSocket), `error` and `message`
 * the same one line saying what to do, `cause` the transport's or decoder's
 * own error.
 */
export class RoomEventsError extends Schema.TaggedError<RoomEventsError>()("RoomEventsError", {
  reason: Schema.Literals(["Unreachable", "Timeout", "UnexpectedAnswer", "InvalidFrame", "BrokeOff"]),
  status: Schema.optional(Schema.Number),
  error: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    return this.error
  }
}

/**
 * What `roomEvents` rejects with when the room WebSocket closed before the
 * room did, or carried something that is not a room frame (`status` 101, an
 * opened WebSocket). `_tag` stays `RoomEventsError`, as in earlier versions.
 */
export class RoomEventsBrokenError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super({ _tag: "RoomEventsError", status: 101, message, cause })
  }
}

/** How long a WebSocket may take to open. */
const openTimeout = "10 seconds"

/** How much longer than its `wait` a long poll may take to answer. */
const pollLeewaySeconds = 30

const decodeFrame = Schema.decodeUnknownEffect(Rooms.PollFrame)

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Poll envelopes; replies to the client's own requests carry a `type` and are not frames. */
const isEnvelope = (value: unknown) => typeof value === "object" && value !== null && !("type" in value)

const socketUrl = (options: RoomEventsOptions, chatId: string, after: number) =>
  `${options.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/api/chats/${
    encodeURIComponent(chatId)
  }/ws?after=${after}`

/** A frame worth delivering after `previous`: new messages, a presence change, or the close. */
const isNews = (frame: Rooms.PollFrame, previous: Rooms.PollFrame | undefined) =>
  previous === undefined ||
  frame.messages.length > 0 ||
  frame.room_status !== previous.room_status ||
  JSON.stringify(frame.presence.map((p) => [p.user_id, p.state])) !==
    JSON.stringify(previous.presence.map((p) => [p.user_id, p.state]))

const preview = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 120 ? `${text.slice(0, 120)}…` : text
}

/** A long poll that failed without an error the API declares: the Promise client's text, one line. */
const pollFailed = (error: HttpClientError.HttpClientError | Schema.SchemaError) => {
  const { reason, status, text } = describeFailure(error)
  return new RoomEventsError({ reason, status, error: text, cause: error })
}

const isPollFailure = (
  error: { readonly _tag: string }
): error is HttpClientError.HttpClientError | Schema.SchemaError =>
  HttpClientError.isHttpClientError(error) || Schema.isSchemaError(error)

/**
 * The frames of a room's chat; runs when consumed. Needs an `HttpClient` (the
 * long polls) and a `Socket.WebSocketConstructor` (`layerWebSocketConstructor`
 * below picks the runtime's).
 */
export const roomEventsStream = (options: RoomEventsOptions, chatId: string) =>
  Stream.suspend(() => {
    let cursor = options.after ?? 0
    let last: Rooms.PollFrame | undefined
    const transport = options.transport ?? "auto"
    const wait = Math.min(Math.max(options.pollWait ?? 25, 1), 30)
    const headers: Record<string, string> = options.sessionToken === undefined
      ? {}
      : { cookie: `${sessionCookieName}=${options.sessionToken}` }
    const deliver = (frame: Rooms.PollFrame) => {
      cursor = frame.cursor
      const news = isNews(frame, last)
      last = frame
      return news
    }
    const resume = () => `start again with after: ${cursor}, or use transport "auto", which carries on by long polling`

    /** A WebSocket failure, told by when it happened: opening it, or once it was open. */
    const socketFailed = (url: string, error: Socket.SocketError) => {
      const reason = error.reason
      switch (reason._tag) {
        case "SocketOpenError":
          return reason.kind === "Timeout"
            ? new RoomEventsError({
              reason: "Timeout",
              error: `the room WebSocket ${url} did not open within ${openTimeout}: ${resume()}`,
              cause: error
            })
            : new RoomEventsError({
              reason: "Unreachable",
              error: `cannot open the room WebSocket ${url} (${reasonOf(reason.cause)})`,
              cause: error
            })
        case "SocketCloseError":
          return new RoomEventsError({
            reason: "BrokeOff",
            status: 101,
            error: `the room WebSocket ${url} closed (${reason.message}) before the room did: ${resume()}`,
            cause: error
          })
        default:
          return new RoomEventsError({
            reason: "BrokeOff",
            status: 101,
            error: `the room WebSocket ${url} broke off (${reasonOf(reason.cause ?? reason)}): ${resume()}`,
            cause: error
          })
      }
    }

    const overSocket = Stream.unwrap(
      Effect.gen(function*() {
        const url = socketUrl(options, chatId, cursor)
        const socket = yield* Socket.makeWebSocket(url, { headers, openTimeout })
        const pull = yield* Socket.readerString(socket)
        return Stream.fromEffectRepeat(pull).pipe(
          Stream.flattenIterable,
          Stream.map(parse),
          Stream.filter(isEnvelope),
          Stream.mapEffect((value) =>
            decodeFrame(value).pipe(Effect.mapError((cause) =>
              new RoomEventsError({
                reason: "InvalidFrame",
                status: 101,
                error: `not a room frame from ${url}: ${
                  preview(value)
                }; the service may be newer than this SDK: update @agent-platform/sdk`,
                cause
              })
            ))
          ),
          Stream.mapError((error) => Socket.isSocketError(error) ? socketFailed(url, error) : error)
        )
      }).pipe(
        Effect.mapError((error) =>
          Socket.isSocketError(error) ? socketFailed(socketUrl(options, chatId, cursor), error) : error
        )
      )
    )

    /** One long poll after the cursor. */
    const poll = Effect.gen(function*() {
      const { api } = yield* make({
        baseUrl: options.baseUrl,
        sessionToken: options.sessionToken,
        timeout: `${wait + pollLeewaySeconds} seconds`
      })
      return Effect.suspend(() => api.roomChats.poll({ params: { id: chatId }, query: { after: cursor, wait } })).pipe(
        Effect.mapError((error) => isPollFailure(error) ? pollFailed(error) : error)
      )
    })

    const byPolling = Stream.unwrap(Effect.map(poll, Stream.fromEffectRepeat))

    // A WebSocket that cannot be opened does not say why: one long poll tells a
    // refusal (not a participant, an ended session), an unreachable service, or
    // a service that answers over HTTP only.
    const overSocketOnly = overSocket.pipe(
      Stream.catchIf(
        (error) => error._tag === "RoomEventsError" && error.reason === "Unreachable",
        (error) =>
          Stream.fromEffect(Effect.flatMap(Effect.flatten(poll), () =>
            Effect.fail(
              new RoomEventsError({
                reason: "Unreachable",
                error:
                  `${error.error}, though the service answers over HTTP: a proxy on the way may refuse WebSocket upgrades; use transport "auto" or "poll"`,
                cause: error.cause
              })
            )))
      )
    )

    const frames = transport === "poll"
      ? byPolling
      : transport === "websocket"
      ? overSocketOnly
      // The WebSocket failed or dropped: carry on from the last cursor by long polling.
      : overSocket.pipe(Stream.catchTag("RoomEventsError", () => byPolling))

    return frames.pipe(
      Stream.filter(deliver),
      Stream.takeUntil((frame) => frame.room_status === "closed")
    )
  })

/**
 * The runtime's own WebSocket where it has one (browsers, Node 22+); on Node 20
 * the `ws` package through `@effect/platform-node`, loaded only when needed so
 * that browser bundles never see it.
 */
export const layerWebSocketConstructor: Layer.Layer<Socket.WebSocketConstructor> =
  typeof (globalThis as { WebSocket?: unknown }).WebSocket === "function"
    ? Socket.layerWebSocketConstructorGlobal
    : Layer.unwrap(
      Effect.promise(() => import("@effect/platform-node/NodeWS")).pipe(
        Effect.map((NodeWS) => NodeWS.layerWebSocketConstructor)
      )
    )

/** The Promise client's error for failed room frames. */
const toRoomEventsPlatformError = (error: unknown): PlatformError => {
  if (!(error instanceof RoomEventsError)) return toPlatformError(error)
  switch (error.reason) {
    case "Unreachable":
      return new ConnectionError(error.message, error.cause)
    case "Timeout":
      return new TimeoutError(error.message)
    case "UnexpectedAnswer":
      return new UnexpectedResponse(error.status, error.message, error.cause)
    case "InvalidFrame":
    case "BrokeOff":
      return new RoomEventsBrokenError(error.message, error.cause)
  }
}

/**
 * The same frames as an async iterator, for Promise users (browsers and Node):
 * `for await (const frame of roomEvents({ baseUrl, sessionToken }, chatId)) { ... }`.
 * A failure rejects like a Promise client call: `ApiError` for a refusal the
 * API declares (`_tag` `NotParticipant`, `Unauthenticated`, `NotFound`, ...,
 * with `status`, `body` and the service's message), `ConnectionError` or
 * `TimeoutError` when no answer came, `UnexpectedResponse` for an answer that
 * is not this service's, and `RoomEventsBrokenError` when the room WebSocket
 * (`transport: "websocket"`) closed before the room did or carried something
 * that is not a room frame.
 */
export const roomEvents = (options: RoomEventsOptions, chatId: string): AsyncIterable<Rooms.PollFrame> =>
  Stream.toAsyncIterable(
    roomEventsStream(options, chatId).pipe(
      Stream.mapError(toRoomEventsPlatformError),
      Stream.provide(FetchHttpClient.layer),
      Stream.provide(layerWebSocketConstructor)
    )
  )
