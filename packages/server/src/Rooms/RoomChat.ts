/**
 * A room's chat (spec: rules 3 and 4): appending a person's message with a
 * gapless `seq`, and the poll frame `{cursor, messages, presence,
 * room_status}` — once, or as a long poll that answers as soon as something
 * new arrives on any replica. The WebSocket (RoomSocket.ts) sends the same
 * frames.
 */
import { Errors, type Rooms as RoomSchemas, RoomsErrors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer, Option, Queue } from "effect"
import { isUuid } from "../Platform/Ids.ts"
import { RoomAgents } from "./RoomAgents.ts"
import { type FeedUpdate, RoomFeeds } from "./RoomFeeds.ts"
import { notParticipant, roomClosed } from "./Rooms.ts"
import { type MessageRow, type PresenceRow, type RoomRow, RoomsRepo } from "./RoomsRepo.ts"

/** A poller stays `online` this long after its request (longer than its own wait). */
const pollPresenceSeconds = 30

export const toMessage = (row: MessageRow): RoomSchemas.RoomMessage =>
  row.role === "user"
    ? {
      id: row.id,
      seq: row.seq,
      role: "user",
      user_id: row.user_id,
      author_name: row.author_name ?? "Former user",
      content: row.content,
      created_at: row.created_at.toISOString()
    }
    : {
      id: row.id,
      seq: row.seq,
      role: "agent",
      agent_id: row.agent_id,
      author_name: row.author_name ?? "Former agent",
      content: row.content,
      created_at: row.created_at.toISOString()
    }

export const toPresence = (row: PresenceRow): RoomSchemas.PresenceEntry => ({
  user_id: row.user_id,
  nombre: row.nombre,
  last_seen_at: row.last_seen_at.toISOString(),
  state: row.online ? "online" : "away"
})

/** Who is there and how, without the times: what makes a presence change worth a frame. */
export const presenceKey = (
  presence: ReadonlyArray<{ readonly user_id: string; readonly online?: boolean; readonly state?: string }>,
  except?: string
) =>
  presence
    .filter((entry) => entry.user_id !== except)
    .map((entry) => `${entry.user_id}:${entry.state ?? (entry.online === true ? "online" : "away")}`)
    .join(",")

export class RoomChat extends Context.Service<RoomChat, {
  /** The room of a chat the caller takes part in: 404 unknown, 400 classic chat, 403 not a participant. */
  readonly roomOfChat: (
    user: UserPrincipal,
    chatId: string
  ) => Effect.Effect<RoomRow, Errors.NotFound | RoomsErrors.NotRoomChat | RoomsErrors.NotParticipant>
  readonly append: (
    user: UserPrincipal,
    chatId: string,
    content: string
  ) => Effect.Effect<
    typeof RoomSchemas.AppendedMessage.Type,
    Errors.NotFound | RoomsErrors.NotRoomChat | RoomsErrors.NotParticipant | RoomsErrors.RoomClosed
  >
  /** Appends to a room already authorized (the WebSocket). */
  readonly appendTo: (
    user: UserPrincipal,
    room: RoomRow,
    content: string
  ) => Effect.Effect<typeof RoomSchemas.AppendedMessage.Type, RoomsErrors.RoomClosed>
  readonly poll: (
    user: UserPrincipal,
    chatId: string,
    query: {
      readonly after?: number | undefined
      readonly limit?: number | undefined
      readonly wait?: number | undefined
    }
  ) => Effect.Effect<RoomSchemas.PollFrame, Errors.NotFound | RoomsErrors.NotRoomChat | RoomsErrors.NotParticipant>
  /** The frame of what is after `after`, read now. */
  readonly frame: (room: RoomRow, after: number, limit: number) => Effect.Effect<RoomSchemas.PollFrame>
  /** Marks the caller seen and online for `seconds`, telling the room when they just came online. */
  readonly touch: (room: RoomRow, userId: string, seconds: number) => Effect.Effect<void>
  /** Marks the caller away now and tells the room. */
  readonly leave: (room: RoomRow, userId: string) => Effect.Effect<void>
}>()("@agent-platform/server/Rooms/RoomChat") {
  static readonly layer = Layer.effect(
    RoomChat,
    Effect.gen(function*() {
      const repo = yield* RoomsRepo
      const feeds = yield* RoomFeeds
      const agents = yield* RoomAgents

      const roomOfChat = Effect.fnUntraced(function*(user: UserPrincipal, chatId: string) {
        const notFound = () => new Errors.NotFound({ error: `chat ${chatId} not found` })
        if (!isUuid(chatId)) return yield* notFound()
        const room = yield* Effect.orDie(repo.findByChat(user.tenantId, chatId))
        if (room === undefined) {
          if (yield* Effect.orDie(repo.chatExists(user.tenantId, chatId))) {
            return yield* new RoomsErrors.NotRoomChat({
              error: `chat ${chatId} is a classic chat without room_mode: read it with GET /v1/chat/history/${chatId}`
            })
          }
          return yield* notFound()
        }
        if (!(yield* Effect.orDie(repo.isParticipant(room.id, user.userId)))) return yield* notParticipant()
        return room
      })

      const appendTo = Effect.fnUntraced(function*(user: UserPrincipal, room: RoomRow, content: string) {
        const stored = yield* Effect.orDie(
          repo.appendHumanMessage({ tenantId: user.tenantId, chatId: room.chat_id, userId: user.userId, content })
        )
        if (stored === undefined) return yield* roomClosed(room)
        yield* Effect.orDie(feeds.signal(room.chat_id, "message"))
        yield* agents.answer({ caller: user, room, content, seq: stored.seq })
        return { id: stored.id, seq: stored.seq, created_at: stored.created_at.toISOString() }
      })

      const frame = (room: RoomRow, after: number, limit: number) =>
        Effect.gen(function*() {
          // The status first: once it says closed, the messages read next include the minutes.
          const status = yield* repo.frameStatus(room.id)
          const messages = yield* repo.messagesAfter(room.chat_id, after, limit)
          const presence = yield* repo.presence(room.id)
          return {
            cursor: messages.length === 0 ? after : messages[messages.length - 1].seq,
            messages: messages.map(toMessage),
            presence: presence.map(toPresence),
            room_status: status ?? "closed"
          } satisfies RoomSchemas.PollFrame
        }).pipe(Effect.orDie)

      const touch = (room: RoomRow, userId: string, seconds: number) =>
        Effect.gen(function*() {
          const cameOnline = yield* repo.touchPresence(room.id, userId, seconds)
          if (cameOnline) yield* feeds.signal(room.chat_id, "presence")
        }).pipe(Effect.orDie)

      const leave = (room: RoomRow, userId: string) =>
        Effect.andThen(repo.leavePresence(room.id, userId), feeds.signal(room.chat_id, "presence")).pipe(Effect.orDie)

      /** Whether an update tells the poller something: a message after its cursor, a close, someone else's presence. */
      const news = (update: FeedUpdate, after: number, presence: string, self: string) =>
        update.messages.some((m) => m.seq > after) || update.status === "closed" ||
        presenceKey(update.presence, self) !== presence

      const poll = Effect.fn("RoomChat.poll")(function*(
        user: UserPrincipal,
        chatId: string,
        query: {
          readonly after?: number | undefined
          readonly limit?: number | undefined
          readonly wait?: number | undefined
        }
      ) {
        const room = yield* roomOfChat(user, chatId)
        const after = query.after ?? 0
        const limit = query.limit ?? 100
        const wait = query.wait ?? 0
        yield* touch(room, user.userId, Math.max(pollPresenceSeconds, wait + 15))
        if (wait === 0) return yield* frame(room, after, limit)
        return yield* Effect.scoped(Effect.gen(function*() {
          // Listening before reading: whatever arrives after the read wakes the wait.
          const updates = yield* feeds.listen(room)
          const now = yield* frame(room, after, limit)
          if (now.messages.length > 0 || now.room_status === "closed") return now
          const seen = presenceKey(now.presence, user.userId)
          const woken = yield* Effect.gen(function*() {
            for (;;) {
              const update = yield* Queue.take(updates)
              if (news(update, after, seen, user.userId)) return true
            }
          }).pipe(Effect.timeoutOption(`${wait} seconds`))
          return Option.isNone(woken) ? now : yield* frame(room, after, limit)
        }))
      })

      return RoomChat.of({
        roomOfChat,
        append: (user, chatId, content) =>
          Effect.flatMap(roomOfChat(user, chatId), (room) => appendTo(user, room, content)),
        appendTo,
        poll,
        frame,
        touch,
        leave
      })
    })
  )
}
