/**
 * The room WebSocket (`GET /api/chats/{id}/ws`): the poll frames pushed as
 * they happen, and appends sent over the same connection.
 *
 * On connect the client gets the frame of what is after its cursor, then a
 * frame whenever its room's feed brings new messages, a presence change or
 * the close (a last frame with `room_status: closed`, then close code 1000).
 * While connected the person is `online`; every 15 s the connection renews
 * that and checks that access still holds — the session alive, the flag on,
 * still a participant — else it closes with 4403; an append checks the same
 * first. A client frame over `maxClientFrameBytes` closes the connection with
 * 1009 (the server's WebSocket option, set in `Server.ts`).
 */
import { type Rooms as RoomSchemas, RoomSocket as Frames, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer, Queue, Schema, type Scope } from "effect"
import * as Socket from "effect/socket/Socket"
import { presenceKey, RoomChat, toMessage, toPresence } from "./RoomChat.ts"
import { type FeedUpdate, RoomFeeds } from "./RoomFeeds.ts"
import { type RoomRow, RoomsRepo } from "./RoomsRepo.ts"
import { WarRoomsFlag } from "./WarRoomsFlag.ts"

const heartbeatSeconds = 15
const presenceSeconds = 2 * heartbeatSeconds
const catchUpBatch = 500

const decodeClientFrame = Schema.decodeUnknownExit(Schema.fromJsonString(Frames.ClientFrame))

/** The JSON of the frame made from a whole feed update, shared by the connections it reaches. */
const sharedText = new WeakMap<FeedUpdate, string>()

/** Why the server ends a connection. */
class Ended {
  constructor(readonly code: number, readonly reason: string) {}
}

const revoked = new Ended(Frames.closeCodes.accessRevoked, "access revoked")

export class RoomSocket extends Context.Service<RoomSocket, {
  /** Serves an upgraded connection of an authorized participant until either side ends it. */
  readonly serve: (input: {
    readonly user: UserPrincipal
    readonly room: RoomRow
    readonly after: number
    readonly socket: Socket.Socket
  }) => Effect.Effect<void, never, Scope.Scope>
}>()("@agent-platform/server/Rooms/RoomSocket") {
  static readonly layer = Layer.effect(
    RoomSocket,
    Effect.gen(function*() {
      const chat = yield* RoomChat
      const feeds = yield* RoomFeeds
      const repo = yield* RoomsRepo
      const flag = yield* WarRoomsFlag

      /** The connection's life; ends with `Ended` (closed by the server) or a socket error (closed by the client). */
      const session = Effect.fnUntraced(function*(
        input: {
          readonly user: UserPrincipal
          readonly room: RoomRow
          readonly after: number
          readonly socket: Socket.Socket
        },
        writer: Socket.Writer
      ) {
        const { user, room } = input
        /** The session alive (signed in, the user active and not blocked), the flag on, still a participant. */
        const accessHolds = Effect.gen(function*() {
          return (yield* Effect.orDie(repo.sessionAlive(user.sessionId))) && (yield* flag.isEnabled(user.tenantId)) &&
            (yield* Effect.orDie(repo.isParticipant(room.id, user.userId)))
        })
        const updates = yield* feeds.listen(room)
        const pull = yield* Socket.readerString(input.socket)
        const send = (value: unknown) => writer.write(JSON.stringify(value))

        let cursor = input.after
        let presence = ""
        /**
         * Sends a frame (`text`: its JSON, when already made); the room closing ends the connection once the
         * frame reaches the end of the chat (`last`), so a catch-up on a closed room still sends every batch.
         */
        const sendFrame = (frame: RoomSchemas.PollFrame, last: boolean, text?: string) =>
          Effect.gen(function*() {
            cursor = frame.cursor
            presence = presenceKey(frame.presence)
            yield* writer.write(text ?? JSON.stringify(frame))
            if (last && frame.room_status === "closed") return yield* Effect.fail(new Ended(1000, "room closed"))
            return frame.messages.length
          })
        /** The frame of what is after the cursor, read from the database. */
        const readFrame = Effect.flatMap(
          Effect.suspend(() => chat.frame(room, cursor, catchUpBatch)),
          (frame) => sendFrame(frame, frame.messages.length < catchUpBatch)
        )

        yield* chat.touch(room, user.userId, presenceSeconds)
        // Catch up from the cursor in batches, then follow the feed.
        while ((yield* readFrame) === catchUpBatch) {
          // more to catch up on
        }

        // The feed's update is shared by every connection to the room on this replica: a frame is
        // made from it without a query, unless it does not reach back to this connection's cursor.
        const follow = Effect.gen(function*() {
          for (;;) {
            const update = yield* Queue.take(updates)
            const fresh = update.messages.filter((m) => m.seq > cursor)
            const nextPresence = update.presence.map(toPresence)
            if (fresh.length === 0 && presenceKey(nextPresence) === presence && update.status === "open") continue
            if (fresh.length > 0 && fresh[0].seq !== cursor + 1) {
              yield* readFrame
              continue
            }
            const frame: RoomSchemas.PollFrame = {
              cursor: fresh.length === 0 ? cursor : fresh[fresh.length - 1].seq,
              messages: fresh.map(toMessage),
              presence: nextPresence,
              room_status: update.status
            }
            // Connections that were at the same cursor send the same bytes: made once per update.
            const whole = fresh.length === update.messages.length
            let text = whole ? sharedText.get(update) : undefined
            if (whole && text === undefined) {
              text = JSON.stringify(frame)
              sharedText.set(update, text)
            }
            yield* sendFrame(frame, true, text)
          }
        })

        const handle = (text: string) =>
          Effect.gen(function*() {
            const decoded = decodeClientFrame(text)
            if (decoded._tag === "Failure") {
              return yield* send({
                type: "error",
                status: 400,
                _tag: "InvalidRequest",
                error:
                  "send {\"type\": \"append\", \"content\": \"...\"} with non-empty content of at most 16,000 characters"
              })
            }
            const request = decoded.value
            // Access is checked again for each append, as the HTTP append checks it for each request:
            // a logout, a block or the flag turned off stops appends at once, not at the next heartbeat.
            if (!(yield* accessHolds)) return yield* Effect.fail(revoked)
            const echo = request.request_id === undefined ? {} : { request_id: request.request_id }
            yield* chat.appendTo(user, room, request.content).pipe(
              Effect.matchEffect({
                onSuccess: (appended) => send({ type: "appended", ...echo, ...appended }),
                onFailure: (error) =>
                  send({ type: "error", ...echo, status: 409, _tag: error._tag, error: error.error })
              })
            )
          })

        const read = Effect.gen(function*() {
          for (;;) {
            for (const text of yield* pull) yield* handle(text)
          }
        })

        const heartbeat = Effect.gen(function*() {
          yield* chat.touch(room, user.userId, presenceSeconds)
          if (!(yield* accessHolds)) return yield* Effect.fail(revoked)
        }).pipe(Effect.delay(`${heartbeatSeconds} seconds`), Effect.forever)

        return yield* Effect.raceAllFirst([follow, read, heartbeat])
      })

      const serve = (
        input: {
          readonly user: UserPrincipal
          readonly room: RoomRow
          readonly after: number
          readonly socket: Socket.Socket
        }
      ) =>
        Effect.gen(function*() {
          const writer = yield* input.socket.writer
          yield* session(input, writer).pipe(
            Effect.catch((reason) =>
              reason instanceof Ended ? writer.write(new Socket.CloseEvent(reason.code, reason.reason)) : Effect.void
            ),
            Effect.ensuring(chat.leave(input.room, input.user.userId)),
            Effect.catchCause((cause) => Effect.logDebug("room socket ended", cause))
          )
        })

      return RoomSocket.of({ serve })
    })
  )
}
