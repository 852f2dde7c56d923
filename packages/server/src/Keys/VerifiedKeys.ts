/**
 * The verified-key cache of the `/v1` hot path, and its eviction on every
 * replica.
 *
 * A verified key is cached for 30 s (an unknown one for 5 s). Revoking a key,
 * or changing its owner (role, `active`, `blocked`), evicts it everywhere,
 * through the protocol of Platform/ReplicaCaches.ts: the eviction leaves when
 * the change commits, every live replica acknowledges it before the change
 * answers, and a replica that stops hearing the channel stops trusting its
 * cache. A trigger on `users` publishes an owner change whichever code path
 * (admin surface, SCIM, SQL) made it.
 *
 * Guarantee: when a revocation (or an owner change) answers, no replica
 * accepts the key any more.
 */
import type { KeyPrincipal } from "@agent-platform/domain"
import { Cache, Context, Duration, Effect, Exit, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { keyRefusal } from "../Access/KeyPolicy.ts"
import { everything, ownerChangeCache, ReplicaCaches } from "../Platform/ReplicaCaches.ts"
import { KeysRepo, type VerifiableKeyRow } from "./KeysRepo.ts"

/** What an eviction drops: one key (by hash), or every key (an owner changed). */
export type EvictionTarget = { readonly _tag: "Key"; readonly hash: string } | { readonly _tag: "All" }

/** A key that does not work, and why (the 401's words). */
export interface KeyRefused {
  readonly _tag: "KeyRefused"
  readonly error: string
}

/** What verifying a key decides: its principal, or why it is refused. */
export type KeyVerdict = KeyPrincipal | KeyRefused

/** An unknown, malformed or revoked key: one answer for all, so keys cannot be told apart. */
export const unknownKey: KeyRefused = { _tag: "KeyRefused", error: "Invalid or revoked API key." }

const toVerdict = (row: VerifiableKeyRow | undefined): KeyVerdict => {
  if (row === undefined) return unknownKey
  const refusal = keyRefusal(
    row.owner_role === null
      ? undefined
      : { role: row.owner_role, active: row.owner_active === true, blocked: row.owner_blocked === true },
    row.scopes
  )
  return refusal !== undefined ? { _tag: "KeyRefused", error: refusal } : {
    _tag: "Key",
    tenantId: row.tenant_id,
    keyId: row.id,
    scopes: row.scopes,
    spaceId: row.space_id,
    rateLimitRpm: row.rate_limit_rpm,
    ownerRole: row.owner_role!,
    ownerId: row.created_by!
  }
}

/** Keys whose verdicts are kept. */
const capacity = 10_000

/**
 * How long a verdict is read from a plain map in front of the cache: a hit
 * there is one `Map` read, where effect's `Cache.get` takes the entry out and
 * puts it back (its recency order) and reads the clock through the fiber —
 * ~1.5 µs of every `/v1` request under load, measured, much of it V8 rehashing
 * the 10,000-entry map its deletes leave holes in. Evictions empty both.
 */
const recentMillis = 1_000

export class VerifiedKeys extends Context.Service<VerifiedKeys, {
  /**
   * The principal of a key hash, or why the key is refused (unknown, revoked,
   * or its owner's state). A database failure is a defect (the request's 500):
   * the hot path, a cache hit, carries no error channel to handle.
   */
  readonly get: (hash: string) => Effect.Effect<KeyVerdict>
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
      const replicas = yield* ReplicaCaches
      const lookup = (hash: string) => Effect.orDie(Effect.map(repo.findActiveByHash(hash), toVerdict))
      const cache = yield* Cache.makeWith(lookup, {
        capacity,
        // Refused keys are remembered briefly too, so guessing costs no database round trip each time.
        timeToLive: (exit) =>
          Exit.isSuccess(exit)
            ? (exit.value._tag === "KeyRefused" ? Duration.seconds(5) : Duration.seconds(30))
            : Duration.zero
      })
      // The verdicts read in the last second, in front of the cache: see {@link recentMillis}.
      const recent = new Map<string, { readonly verdict: KeyVerdict; readonly until: number }>()
      // Bumped by every eviction: a lookup that started before one must not put what it read in `recent`.
      let generation = 0
      const get = (hash: string): Effect.Effect<KeyVerdict> => {
        const hit = recent.get(hash)
        if (hit !== undefined && hit.until > Date.now()) return Effect.succeed(hit.verdict)
        const seen = generation
        return Effect.map(Cache.get(cache, hash), (verdict) => {
          if (generation === seen) {
            if (recent.size >= capacity) recent.clear()
            recent.set(hash, { verdict, until: Date.now() + recentMillis })
          }
          return verdict
        })
      }

      // The cache the users trigger's owner changes empty.
      replicas.register(ownerChangeCache, {
        evict: (hash) =>
          Effect.andThen(
            Effect.sync(() => {
              generation++
              recent.delete(hash)
            }),
            Cache.invalidate(cache, hash)
          ),
        clear: Effect.andThen(
          Effect.sync(() => {
            generation++
            recent.clear()
          }),
          Cache.invalidateAll(cache)
        )
      })

      return VerifiedKeys.of({
        // A replica that stopped hearing the channel may have missed an eviction: it asks the database.
        get: (hash) => (replicas.trusted() ? get(hash) : lookup(hash)),
        evicting: (target, change) =>
          replicas.evicting(ownerChangeCache, target._tag === "Key" ? target.hash : everything, change)
      })
    })
  ).pipe(Layer.provide(Layer.merge(KeysRepo.layer, ReplicaCaches.layer)))
}
