/**
 * Caches of the hot paths that every replica keeps, and the protocol that
 * evicts their entries on every replica before a change answers (used by the
 * verified-key cache, Keys/VerifiedKeys.ts, and the agent lists,
 * Agents/AgentLists.ts).
 *
 * - Evictions travel over the notification channel (PostgreSQL
 *   LISTEN/NOTIFY), published in the transaction that makes the change, so
 *   they leave only once it commits.
 * - Every replica acknowledges an eviction once it has applied it, and the
 *   change's request waits for the acknowledgements of every live replica
 *   (bounded by {@link ackTimeoutMillis}) before it answers.
 * - Replicas announce themselves with a heartbeat every
 *   {@link heartbeatMillis}; a replica trusts its caches only while it keeps
 *   hearing its own heartbeats back (within {@link trustMillis}). The channel
 *   delivers in commit order, so a replica that heard a heartbeat sent after an
 *   eviction has applied that eviction; one whose listener is down stops
 *   trusting its caches, and reads from the database, before the bound of a
 *   waiting change has passed. When it hears itself again after missing one of
 *   its own heartbeats, it empties every cache first (what it missed is lost).
 *   On the embedded database, which runs inside the process, the listener
 *   cannot drop: the caches are always trusted there.
 *
 * Guarantee: when a change that evicts answers, no replica serves the evicted
 * entry any more.
 */
import { Context, Deferred, Duration, Effect, Layer, Schedule, Stream } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { DatabaseMode } from "./Database.ts"
import { Notifications } from "./Notifications.ts"

/** The notification topic of the protocol (the `users` trigger of migration 0006 publishes on it too). */
export const cacheTopic = "key_cache"

/** How often a replica announces itself. */
export const heartbeatMillis = 500
/** How long a replica trusts its caches after the last heartbeat it heard back from itself. */
export const trustMillis = 1_500
/** How long a replica counts as live after its last heartbeat. */
export const liveMillis = 1_500
/** How long a change waits for the acknowledgements of live replicas; at least `trustMillis`. */
export const ackTimeoutMillis = 2_000

/** A cache kept on every replica: how to drop one entry, or all of them. */
export interface ReplicatedCache {
  readonly evict: (target: string) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
}

/** The target that drops every entry of a cache. */
export const everything = "*"

/**
 * The cache the `owner:` message of the `users` trigger (migration 0006)
 * empties: a user's role or state changed, so keys they own may have become
 * unusable.
 */
export const ownerChangeCache = "keys"

export class ReplicaCaches extends Context.Service<ReplicaCaches, {
  /** Registers a cache under a name: evictions published for that name run its `evict` (or `clear` for `*`). */
  readonly register: (name: string, cache: ReplicatedCache) => void
  /** Whether this replica's caches may answer: it keeps hearing the channel. Else read from the database. */
  readonly trusted: () => boolean
  /**
   * Runs a change that must evict `target` (or {@link everything}) from the
   * cache `name`: `change` runs `publish` inside its transaction (it leaves on
   * commit); once `change` succeeds, this waits for every live replica to have
   * applied the eviction (at most {@link ackTimeoutMillis}).
   */
  readonly evicting: <A, E, R>(
    name: string,
    target: string,
    change: (publish: Effect.Effect<void, SqlError>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}>()("@agent-platform/server/Platform/ReplicaCaches") {
  static readonly layer = Layer.effect(
    ReplicaCaches,
    Effect.gen(function*() {
      const notifications = yield* Notifications
      const { kind } = yield* DatabaseMode
      const replica = crypto.randomUUID()
      const caches = new Map<string, ReplicatedCache>()

      /** When this replica last heard its own heartbeat back (the heartbeat's send time, by this clock). */
      let heardSelfAt = 0
      /** The number of this replica's last heartbeat sent, and of the last one heard back. */
      let sentSeq = 0
      let heardSeq = 0
      const lastSeen = new Map<string, number>()
      const pending = new Map<string, { readonly waiting: Set<string>; readonly done: Deferred.Deferred<void> }>()
      // The embedded database lives in this process: its listener cannot drop, and under load the heartbeats
      // (queued behind requests on its two connections) may come late, which must not turn every read into a query.
      const trusted = kind === "embedded" ? () => true : () => Date.now() - heardSelfAt < trustMillis

      const clearAll = Effect.suspend(() => Effect.forEach(caches.values(), (cache) => cache.clear, { discard: true }))

      /** Applies `name/target` (the eviction's address in a message). */
      const apply = (address: string) =>
        Effect.suspend(() => {
          const split = address.indexOf("/")
          const cache = caches.get(address.slice(0, split))
          if (split < 0 || cache === undefined) return Effect.void
          const target = address.slice(split + 1)
          return target === everything ? cache.clear : cache.evict(target)
        })

      const acknowledged = (id: string, from: string) =>
        Effect.suspend(() => {
          const eviction = pending.get(id)
          if (eviction === undefined) return Effect.void
          eviction.waiting.delete(from)
          return eviction.waiting.size === 0 ? Deferred.succeed(eviction.done, undefined) : Effect.void
        })

      // One subscription for every message of the protocol, handled in delivery order.
      const handle = (payload: string) => {
        const first = payload.indexOf(":")
        const kind = first < 0 ? payload : payload.slice(0, first)
        const rest = first < 0 ? "" : payload.slice(first + 1)
        const second = rest.indexOf(":")
        const a = second < 0 ? rest : rest.slice(0, second)
        const b = second < 0 ? "" : rest.slice(second + 1)
        switch (kind) {
          case "hb": {
            const now = Date.now()
            lastSeen.set(a, now)
            if (a !== replica) return Effect.void
            // Replicas gone for a while are forgotten, so the map stays as small as the fleet.
            for (const [name, seen] of lastSeen) if (now - seen > 60_000) lastSeen.delete(name)
            const [seq, sentAt] = b.split("/").map(Number)
            // A heartbeat of ours went missing: the listener was down (it reconnects after a second, while
            // heartbeats leave every half second), and evictions sent meanwhile are lost. Start afresh.
            const gap = seq !== heardSeq + 1
            heardSeq = seq
            heardSelfAt = sentAt
            return gap ? clearAll : Effect.void
          }
          case "evict":
            return apply(b).pipe(
              Effect.andThen(notifications.publish(cacheTopic, `ack:${a}:${replica}`)),
              Effect.ignore
            )
          // A change made outside the service (a trigger of migration 0014): dropped, without acknowledgement.
          case "drop":
            return apply(a)
          case "owner":
            return apply(`${ownerChangeCache}/${everything}`)
          case "ack":
            return acknowledged(a, b)
          default:
            return Effect.void
        }
      }
      yield* notifications.subscribe(cacheTopic).pipe(Stream.runForEach(handle), Effect.forkScoped)
      yield* Effect.suspend(() => notifications.publish(cacheTopic, `hb:${replica}:${++sentSeq}/${Date.now()}`))
        .pipe(
          Effect.ignore,
          Effect.repeat(Schedule.spaced(Duration.millis(heartbeatMillis))),
          Effect.forkScoped
        )

      const evicting = <A, E, R>(
        name: string,
        target: string,
        change: (publish: Effect.Effect<void, SqlError>) => Effect.Effect<A, E, R>
      ): Effect.Effect<A, E, R> =>
        Effect.suspend(() => {
          const id = crypto.randomUUID()
          const now = Date.now()
          const address = `${name}/${target}`
          const waiting = new Set([...lastSeen].filter(([, seen]) => now - seen < liveMillis).map(([name]) => name))
          const done = Deferred.makeUnsafe<void>()
          let published = false
          // Registered before anything is published: an acknowledgement may arrive before the change returns.
          pending.set(id, { waiting, done })
          const publish = Effect.tap(
            notifications.publish(cacheTopic, `evict:${id}:${address}`),
            () => Effect.sync(() => void (published = true))
          )
          const settle = Effect.gen(function*() {
            if (!published) return
            yield* apply(address)
            if (waiting.size === 0) return
            yield* Deferred.await(done).pipe(Effect.timeoutOption(Duration.millis(ackTimeoutMillis)))
          })
          return change(publish).pipe(
            Effect.tap(() => settle),
            Effect.ensuring(Effect.sync(() => pending.delete(id)))
          )
        })

      return ReplicaCaches.of({
        register: (name, cache) => void caches.set(name, cache),
        trusted,
        evicting
      })
    })
  )
}
