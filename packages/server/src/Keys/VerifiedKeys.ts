/**
 * The verified-key cache of the `/v1` hot path, and its eviction on every
 * replica.
 *
 * A verified key is cached for 30 s (an unknown one for 5 s). Revoking a key,
 * or changing its owner (role, `active`, `blocked`), evicts it everywhere:
 *
 * - Evictions travel over the notification channel (PostgreSQL
 *   LISTEN/NOTIFY), published in the transaction that makes the change, so
 *   they leave only once it commits. A trigger on `users` publishes an owner
 *   change whichever code path (admin surface, SCIM, SQL) made it.
 * - Every replica acknowledges an eviction once it has applied it, and the
 *   change's request waits for the acknowledgements of every live replica
 *   (bounded by {@link ackTimeoutMillis}) before it answers.
 * - Replicas announce themselves with a heartbeat every
 *   {@link heartbeatMillis}; a replica trusts its cache only while it keeps
 *   hearing its own heartbeats back (within {@link trustMillis}). The channel
 *   delivers in commit order, so a replica that heard a heartbeat sent after an
 *   eviction has applied that eviction; one whose listener is down stops
 *   trusting its cache, and reads keys from the database, before the bound of
 *   a waiting change has passed. When it hears itself again after missing one
 *   of its own heartbeats, it empties the cache first (what it missed is lost).
 *
 * Guarantee: when a revocation (or an owner change) answers, no replica
 * accepts the key any more.
 */
import type { KeyPrincipal } from "@agent-platform/domain"
import { Cache, Context, Deferred, Duration, Effect, Exit, Layer, Schedule, Stream } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { keyUsable } from "../Access/KeyPolicy.ts"
import { Notifications } from "../Platform/Notifications.ts"
import { KeysRepo, type VerifiableKeyRow } from "./KeysRepo.ts"

/** The notification topic of the protocol (the `users` trigger of migration 0006 publishes on it too). */
export const keyCacheTopic = "key_cache"

/** How often a replica announces itself. */
export const heartbeatMillis = 500
/** How long a replica trusts its cache after the last heartbeat it heard back from itself. */
export const trustMillis = 1_500
/** How long a replica counts as live after its last heartbeat. */
export const liveMillis = 1_500
/** How long a change waits for the acknowledgements of live replicas; at least `trustMillis`. */
export const ackTimeoutMillis = 2_000

/** What an eviction drops: one key (by hash), or every key (an owner changed). */
export type EvictionTarget = { readonly _tag: "Key"; readonly hash: string } | { readonly _tag: "All" }

const toPrincipal = (row: VerifiableKeyRow): KeyPrincipal | undefined =>
  keyUsable(
      row.owner_role === null
        ? undefined
        : { role: row.owner_role, active: row.owner_active === true, blocked: row.owner_blocked === true },
      row.scopes
    )
    ? {
      _tag: "Key",
      tenantId: row.tenant_id,
      keyId: row.id,
      scopes: row.scopes,
      spaceId: row.space_id,
      rateLimitRpm: row.rate_limit_rpm
    }
    : undefined

export class VerifiedKeys extends Context.Service<VerifiedKeys, {
  /** The principal of a key hash; undefined for an unknown, revoked or unusable key. */
  readonly get: (hash: string) => Effect.Effect<KeyPrincipal | undefined, SqlError>
  /**
   * Runs a change that must evict keys: `change` runs `publish` inside its
   * transaction (it leaves on commit); once `change` succeeds, this waits for
   * every live replica to have applied the eviction (at most
   * {@link ackTimeoutMillis}).
   */
  readonly evicting: <A, E, R>(
    target: EvictionTarget,
    change: (publish: Effect.Effect<void, SqlError>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}>()("@agent-platform/server/Keys/VerifiedKeys") {
  static readonly layer = Layer.effect(
    VerifiedKeys,
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const notifications = yield* Notifications
      const replica = crypto.randomUUID()
      const lookup = (hash: string) =>
        Effect.map(repo.findActiveByHash(hash), (row) => (row === undefined ? undefined : toPrincipal(row)))
      const cache = yield* Cache.makeWith(lookup, {
        capacity: 10_000,
        // Unknown keys are remembered briefly too, so guessing costs no database round trip each time.
        timeToLive: (exit) =>
          Exit.isSuccess(exit) ? (exit.value === undefined ? Duration.seconds(5) : Duration.seconds(30)) : Duration.zero
      })

      /** When this replica last heard its own heartbeat back (the heartbeat's send time, by this clock). */
      let heardSelfAt = 0
      /** The number of this replica's last heartbeat sent, and of the last one heard back. */
      let sentSeq = 0
      let heardSeq = 0
      const lastSeen = new Map<string, number>()
      const pending = new Map<string, { readonly waiting: Set<string>; readonly done: Deferred.Deferred<void> }>()
      const trusted = () => Date.now() - heardSelfAt < trustMillis

      const apply = (target: string) => (target === "*" ? Cache.invalidateAll(cache) : Cache.invalidate(cache, target))

      const acknowledged = (id: string, from: string) =>
        Effect.suspend(() => {
          const eviction = pending.get(id)
          if (eviction === undefined) return Effect.void
          eviction.waiting.delete(from)
          return eviction.waiting.size === 0 ? Deferred.succeed(eviction.done, undefined) : Effect.void
        })

      // One subscription for every message of the protocol, handled in delivery order.
      const handle = (payload: string) => {
        const [kind, a = "", b = ""] = payload.split(":")
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
            return gap ? Cache.invalidateAll(cache) : Effect.void
          }
          case "evict":
            return apply(b).pipe(
              Effect.andThen(notifications.publish(keyCacheTopic, `ack:${a}:${replica}`)),
              Effect.ignore
            )
          case "owner":
            return apply("*")
          case "ack":
            return acknowledged(a, b)
          default:
            return Effect.void
        }
      }
      yield* notifications.subscribe(keyCacheTopic).pipe(Stream.runForEach(handle), Effect.forkScoped)
      yield* Effect.suspend(() => notifications.publish(keyCacheTopic, `hb:${replica}:${++sentSeq}/${Date.now()}`))
        .pipe(
          Effect.ignore,
          Effect.repeat(Schedule.spaced(Duration.millis(heartbeatMillis))),
          Effect.forkScoped
        )

      const evicting = <A, E, R>(
        target: EvictionTarget,
        change: (publish: Effect.Effect<void, SqlError>) => Effect.Effect<A, E, R>
      ): Effect.Effect<A, E, R> =>
        Effect.suspend(() => {
          const id = crypto.randomUUID()
          const now = Date.now()
          const key = target._tag === "Key" ? target.hash : "*"
          const waiting = new Set([...lastSeen].filter(([, seen]) => now - seen < liveMillis).map(([name]) => name))
          const done = Deferred.makeUnsafe<void>()
          let published = false
          // Registered before anything is published: an acknowledgement may arrive before the change returns.
          pending.set(id, { waiting, done })
          const publish = Effect.tap(
            notifications.publish(keyCacheTopic, `evict:${id}:${key}`),
            () => Effect.sync(() => void (published = true))
          )
          const settle = Effect.gen(function*() {
            if (!published) return
            yield* apply(key)
            if (waiting.size === 0) return
            yield* Deferred.await(done).pipe(Effect.timeoutOption(Duration.millis(ackTimeoutMillis)))
          })
          return change(publish).pipe(
            Effect.tap(() => settle),
            Effect.ensuring(Effect.sync(() => pending.delete(id)))
          )
        })

      return VerifiedKeys.of({
        // A replica that stopped hearing the channel may have missed an eviction: it asks the database.
        get: (hash) => (trusted() ? Cache.get(cache, hash) : lookup(hash)),
        evicting
      })
    })
  ).pipe(Layer.provide(KeysRepo.layer))
}
