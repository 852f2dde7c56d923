/** The handlers of `/api/rooms` and of room chats (`/api/chats/{id}`: append, poll, WebSocket). */
import { Api, Errors } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { IncomingMessage } from "node:http"
import { currentUser } from "../Auth/CurrentUser.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { RoomChat } from "./RoomChat.ts"
import { Rooms } from "./Rooms.ts"
import { RoomSocket } from "./RoomSocket.ts"
import { requireWebSocketHandshake } from "./WebSocketHandshake.ts"

/**
 * The URL this service answers on, from the local end of the request's
 * connection (never from the Host header, which the caller controls): the
 * default base of invitation links when `APP_BASE_URL` is unset.
 */
const ownUrl = (request: HttpServerRequest.HttpServerRequest): string => {
  const socket = (request.source as IncomingMessage).socket
  const address = socket?.localAddress ?? "127.0.0.1"
  const host = address.includes(":") ? (address.startsWith("::ffff:") ? address.slice(7) : `[${address}]`) : address
  return `http://${host}:${socket?.localPort ?? 80}`
}

/**
 * A browser's WebSocket carries the session cookie to any page's request:
 * its `Origin` must be this service's own host or a configured CORS origin.
 * Clients that send no Origin (not browsers) are not at risk.
 */
const checkOrigin = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const origin = request.headers.origin
    if (origin === undefined) return
    const config = yield* ServerConfig
    const host = URL.canParse(origin) ? new URL(origin).host : undefined
    if (host !== undefined && host === request.headers.host) return
    if (config.corsOrigins.includes("*") || config.corsOrigins.includes(origin)) return
    return yield* new Errors.AccessDenied({
      error: `Origin ${origin} may not open this WebSocket: add it to CORS_ORIGINS.`
    })
  })

export const RoomsHttp = HttpApiBuilder.group(Api, "rooms", (handlers) =>
  Effect.gen(function*() {
    const rooms = yield* Rooms
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(currentUser, (user) => rooms.create(user, payload)))
      .handle("list", ({ query }) => Effect.flatMap(currentUser, (user) => rooms.list(user, query)))
      .handle("get", ({ params }) => Effect.flatMap(currentUser, (user) => rooms.get(user, params.id)))
      .handle("addParticipant", ({ params, payload }) =>
        Effect.flatMap(currentUser, (user) => rooms.addParticipant(user, params.id, payload)))
      .handle("close", ({ params }) =>
        Effect.flatMap(currentUser, (user) => rooms.close(user, params.id)))
      .handle("invite", ({ params, payload, request }) =>
        Effect.flatMap(currentUser, (user) =>
          rooms.invite(user, params.id, payload, ownUrl(request))))
      .handle("invitableUsers", ({ params, query }) =>
        Effect.flatMap(currentUser, (user) =>
          rooms.invitableUsers(user, params.id, query.q)))
  }))

export const RoomChatsHttp = HttpApiBuilder.group(Api, "roomChats", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* RoomChat
    const sockets = yield* RoomSocket
    const config = yield* ServerConfig
    return handlers
      .handle("append", ({ params, payload }) =>
        Effect.flatMap(currentUser, (user) => chat.append(user, params.id, payload.content)))
      .handle("poll", ({ params, query }) =>
        Effect.flatMap(currentUser, (user) => chat.poll(user, params.id, query)))
      .handle("socket", ({ params, query, request }) =>
        Effect.gen(function*() {
          const user = yield* currentUser
          yield* checkOrigin(request).pipe(Effect.provideService(ServerConfig, config))
          const room = yield* chat.roomOfChat(user, params.id)
          yield* requireWebSocketHandshake(request, params.id)
          const socket = yield* Effect.orDie(request.upgrade)
          yield* Effect.scoped(sockets.serve({ user, room, after: query.after ?? 0, socket }))
          // The server replaces this with the 101 it sent.
          return HttpServerResponse.empty()
        }))
  }))
