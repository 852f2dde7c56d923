/**
 * Live updates of rooms across replicas. A change to a room's chat (a
 * message, presence, the room closing) is announced with PostgreSQL NOTIFY
 * through the process's one listener (Platform/Notifications.ts), so every
 * replica hears it. Each replica keeps one feed per room that has listeners
 * here (WebSockets, long polls): on a signal the feed reads what is new once
 * — the messages after the last it read, the presence, the status — and
 * hands the same update to every listener. A burst of signals is coalesced
 * into one read, so fan-out to many clients costs two queries, not two per
 * client.
 */
import { Cause, Context, Effect, type Exit, Fiber, Layer, Queue, Schema, type Scope, Semaphore, Stream } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { Notifications } from "../Platform/Notifications.ts"
import { type MessageRow, type PresenceRow, RoomsRepo } from "./RoomsRepo.ts"

const topic = "room"

/** What changed in a room's chat. */
export type SignalKind = "message" | "presence" | "status"

const Signal = Schema.Struct({ chat: Schema.String, kind: Schema.Literals(["message", "presence", "status"]) })
const decodeSignal = Schema.decodeUnknownOption(Schema.fromJsonString(Signal))

/** What a feed read after a signal: the new messages, and the room's presence and status now. */
export interface FeedUpdate {
  readonly messages: ReadonlyArray<MessageRow>
  readonly presence: ReadonlyArray<PresenceRow>
  readonly status: "open" | "closed"
}

/** Messages read per query when catching up. */
const readBatch = 500

interface Feed {
  readonly listeners: Set<Queue.Queue<FeedUpdate>>
  readonly dirty: Queue.Queue<void>
  fiber: Fiber.Fiber<void> | undefined
}

export class RoomFeeds extends Context.Service<RoomFeeds, {
  /** Announces a change of the room's chat to every replica (inside a transaction: when it commits). */
  readonly signal: (chatId: string, kind: SignalKind) => Effect.Effect<void, SqlError>
  /**
   * Listens to a room's updates until the scope closes. Listening starts
   * before this returns, so a read made afterwards misses nothing.
   */
  readonly listen: (
    room: { readonly id: string; readonly chat_id: string }
  ) => Effect.Effect<Queue.Dequeue<FeedUpdate>, never, Scope.Scope>
}>()("@agent-platform/server/Rooms/RoomFeeds") {
  static readonly layer = Layer.effect(
    RoomFeeds,
    Effect.gen(function*() {
      const notifications = yield* Notifications
      const repo = yield* RoomsRepo
      const scope = yield* Effect.scope
      const feeds = new Map<string, Feed>()
      const lock = yield* Semaphore.make(1)

      /** Reads what is new after each signal and hands it to the listeners. */
      const follow = (room: { readonly id: string; readonly chat_id: string }, feed: Feed, startSeq: number) =>
        Effect.gen(function*() {
          let lastSeq = startSeq
          /** One read after a signal; a failed read is retried with the next signal or the retry below. */
          const read = Effect.gen(function*() {
            // The status first: once it says closed, the messages read next include the minutes.
            const status = yield* repo.frameStatus(room.id)
            const messages: Array<MessageRow> = []
            for (;;) {
              const batch = yield* repo.messagesAfter(room.chat_id, lastSeq, readBatch)
              messages.push(...batch)
              if (batch.length > 0) lastSeq = batch[batch.length - 1].seq
              if (batch.length < readBatch) break
            }
            const presence = yield* repo.presence(room.id)
            const update: FeedUpdate = { messages, presence, status: status ?? "closed" }
            for (const listener of feed.listeners) Queue.offerUnsafe(listener, update)
          }).pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.interrupt
                : Effect.logWarning("room feed read failed; retrying", cause).pipe(
                  Effect.andThen(Effect.sleep("1 second")),
                  Effect.andThen(Effect.sync(() => Queue.offerUnsafe(feed.dirty, undefined)))
                )
            )
          )
          for (;;) {
            yield* Queue.take(feed.dirty)
            yield* read
          }
        })

      // One subscription for the process: signals mark the feed of their room, if this replica has one.
      yield* Stream.runForEach(notifications.subscribe(topic), (payload) =>
        Effect.sync(() => {
          const signal = decodeSignal(payload)
          if (signal._tag === "None") return
          const feed = feeds.get(signal.value.chat)
          if (feed !== undefined) Queue.offerUnsafe(feed.dirty, undefined)
        })).pipe(Effect.forkIn(scope))

      const acquire = (room: { readonly id: string; readonly chat_id: string }, listener: Queue.Queue<FeedUpdate>) =>
        lock.withPermits(1)(Effect.gen(function*() {
          const existing = feeds.get(room.chat_id)
          if (existing !== undefined) {
            existing.listeners.add(listener)
            return
          }
          const feed: Feed = { listeners: new Set([listener]), dirty: yield* Queue.sliding<void>(1), fiber: undefined }
          feeds.set(room.chat_id, feed)
          const startSeq = yield* Effect.orDie(repo.lastSeq(room.chat_id))
          feed.fiber = yield* follow(room, feed, startSeq).pipe(Effect.forkIn(scope))
        }))

      const release = (chatId: string, listener: Queue.Queue<FeedUpdate>) =>
        lock.withPermits(1)(Effect.gen(function*() {
          const feed = feeds.get(chatId)
          if (feed === undefined) return
          feed.listeners.delete(listener)
          if (feed.listeners.size > 0) return
          feeds.delete(chatId)
          if (feed.fiber !== undefined) yield* Fiber.interrupt(feed.fiber)
        }))

      return RoomFeeds.of({
        signal: (chatId, kind) => notifications.publish(topic, JSON.stringify({ chat: chatId, kind })),
        listen: (room) =>
          Effect.acquireRelease(
            Effect.gen(function*() {
              const listener = yield* Queue.unbounded<FeedUpdate>()
              yield* acquire(room, listener)
              return listener
            }),
            (listener, _exit: Exit.Exit<unknown, unknown>) => release(room.chat_id, listener)
          )
      })
    })
  )
}
