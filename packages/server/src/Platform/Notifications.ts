/**
 * Cross-replica notifications over PostgreSQL LISTEN/NOTIFY, on one channel
 * and one listening connection for the whole process (the embedded database
 * has a pool of two connections: one listener per feature would starve it).
 * Each message carries a topic; subscribers get the payloads of theirs.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, PubSub, Schedule, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

const channel = "agent_platform_events"

interface Message {
  readonly topic: string
  readonly payload: string
}

export class Notifications extends Context.Service<Notifications, {
  /**
   * Publishes to every replica (this one included) when the surrounding
   * transaction commits; immediately outside a transaction.
   */
  readonly publish: (topic: string, payload: string) => Effect.Effect<void, SqlError>
  /** The payloads published on a topic from now on. */
  readonly subscribe: (topic: string) => Stream.Stream<string>
}>()("@agent-platform/server/Platform/Notifications") {
  static readonly layer = Layer.effect(
    Notifications,
    Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      const sql = yield* SqlClient.SqlClient
      const hub = yield* PubSub.unbounded<Message>()
      // The listener reconnects after a dropped connection; messages sent meanwhile are missed,
      // which every subscriber tolerates (caches expire, queues are polled too).
      yield* Effect.scoped(Effect.gen(function*() {
        const queue = yield* pg.listen(channel)
        yield* Stream.fromQueue(queue).pipe(
          Stream.runForEach((notification) =>
            Effect.suspend(() => {
              const raw = notification.payload
              const split = raw.indexOf(":")
              return split < 0
                ? Effect.void
                : PubSub.publish(hub, { topic: raw.slice(0, split), payload: raw.slice(split + 1) })
            })
          )
        )
      })).pipe(
        Effect.tapCause((cause) => Effect.logWarning("notification listener stopped; reconnecting", cause)),
        Effect.retry(Schedule.spaced("1 second")),
        Effect.forkScoped
      )
      return Notifications.of({
        publish: (topic, payload) => Effect.asVoid(sql`SELECT pg_notify(${channel}, ${`${topic}:${payload}`})`),
        subscribe: (topic) =>
          Stream.fromPubSub(hub).pipe(
            Stream.filter((message) => message.topic === topic),
            Stream.map((message) => message.payload)
          )
      })
    })
  )
}
