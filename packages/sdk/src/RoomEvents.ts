/**
 * A room's live frames (`{cursor, messages, presence, room_status}`): an
 * Effect `Stream` for Effect users, an async iterator for Promise users.
 *
 * They arrive over the room WebSocket (`GET /api/chats/{id}/ws`) with the
 * session cookie. When the WebSocket cannot be opened (a proxy that refuses
 * upgrades, an old runtime) or drops, the stream carries on with long polls
 * (`GET /api/chats/{id}/messages?wait=`) from the last cursor it delivered,
 * so no message is lost or repeated. The stream ends after the frame that
 * says `room_status: closed`. Refusals (not a participant, the flag off, an
 * ended session) fail it with the API's typed errors.
 */
import { Rooms } from "@agent-platform/domain"
import { Effect, Layer, Schema, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Socket from "effect/socket/Socket"
import { make, sessionCookieName } from "./Client.ts"

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

/** The connection broke in a way neither transport could recover from. */
export class RoomEventsError extends Schema.TaggedError<RoomEventsError>()("RoomEventsError", {
  error: Schema.String
}) {}

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
    const headers: Record<string, string> = options.sessionToken === undefined
      ? {}
      : { cookie: `${sessionCookieName}=${options.sessionToken}` }
    const deliver = (frame: Rooms.PollFrame) => {
      cursor = frame.cursor
      const news = isNews(frame, last)
      last = frame
      return news
    }

    const overSocket = Stream.unwrap(Effect.gen(function*() {
      const socket = yield* Socket.makeWebSocket(socketUrl(options, chatId, cursor), {
        headers,
        openTimeout: "10 seconds"
      })
      const pull = yield* Socket.readerString(socket)
      return Stream.fromEffectRepeat(pull).pipe(
        Stream.flattenIterable,
        Stream.map(parse),
        Stream.filter(isEnvelope),
        Stream.mapEffect((value) =>
          decodeFrame(value).pipe(Effect.mapError(() =>
            new RoomEventsError({ error: `not a room frame: ${JSON.stringify(value).slice(0, 200)}` })
          ))
        )
      )
    })).pipe(
      Stream.mapError((error) =>
        Socket.isSocketError(error)
          ? new RoomEventsError({ error: `the room WebSocket failed: ${error.message}` })
          : error
      )
    )

    const byPolling = Stream.unwrap(Effect.gen(function*() {
      const { api } = yield* make({ baseUrl: options.baseUrl, sessionToken: options.sessionToken })
      const wait = Math.min(Math.max(options.pollWait ?? 25, 1), 30)
      return Stream.fromEffectRepeat(
        Effect.suspend(() =>
          api.roomChats.poll({ params: { id: chatId }, query: { after: cursor, wait } })
        )
      ).pipe(
        Stream.mapError((error) =>
          error._tag === "HttpClientError" || error._tag === "SchemaError"
            ? new RoomEventsError({ error: `polling the room failed: ${error.message}` })
            : error
        )
      )
    }))

    const frames = transport === "poll"
      ? byPolling
      : transport === "websocket"
      ? overSocket
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

/**
 * The same frames as an async iterator, for Promise users (browsers and Node):
 * `for await (const frame of roomEvents({ baseUrl, sessionToken }, chatId)) { ... }`.
 * A failure is thrown as the typed error (`_tag`, `error`).
 */
export const roomEvents = (options: RoomEventsOptions, chatId: string): AsyncIterable<Rooms.PollFrame> =>
  Stream.toAsyncIterable(
    roomEventsStream(options, chatId).pipe(
      Stream.provide(FetchHttpClient.layer),
      Stream.provide(layerWebSocketConstructor)
    )
  )
