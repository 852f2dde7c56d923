/**
 * The verified-key cache of the `/v1` hot path, and its eviction on every
 * replica.
 *
 * A key's verdict is used for 30 s after it was read from the database (an
 * unknown key's for 5 s); a key in use is read again in the background, in
 * batches, before then, so that its requests never wait for the database.
 * Revoking a key, or changing its owner (role, `active`, `blocked`), evicts
 * it everywhere, through the protocol of Platform/ReplicaCaches.ts: the eviction leaves when
 * the change commits, every live replica acknowledges it before the change
 * answers, and a replica that stops hearing the channel stops trusting its
 * cache. A trigger on `users` publishes an owner change whichever code path
 * (admin surface, SCIM, SQL) made it.
 *
 * Guarantee: when a revocation (or an owner change) answers, no replica
 * accepts the key any more.
 */
import type { KeyPrincipal } from "@agent-platform/domain"
import { Array as Arr, Cache, Context, Duration, Effect, Exit, Layer, Request, Schedule } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { type KeyRefusal, keyRefusal } from "../Access/KeyPolicy.ts"
import { groupCommit } from "../Platform/GroupCommit.ts"
import { everything, ownerChangeCache, ReplicaCaches } from "../Platform/ReplicaCaches.ts"
import { KeysRepo, type VerifiableKeyRow } from "./KeysRepo.ts"

/** What an eviction drops: one key (by hash), or every key (an owner changed). */
export type EvictionTarget = { readonly _tag: "Key"; readonly hash: string } | { readonly _tag: "All" }

/** A key that does not work, why (the answer's words) and how it is answered (see `KeyRefusal`). */
export interface KeyRefused extends KeyRefusal {
  readonly _tag: "KeyRefused"
}

/** What verifying a key decides: its principal, or why it is refused. */
export type KeyVerdict = KeyPrincipal | KeyRefused

/** An unknown, malformed or revoked key: one answer for all, so keys cannot be told apart. */
export const unknownKey: KeyRefused = {
  _tag: "KeyRefused",
  answer: "Unauthenticated",
  error: "Invalid or revoked API key."
}

const toVerdict = (row: VerifiableKeyRow | undefined): KeyVerdict => {
  if (row === undefined) return unknownKey
  const refusal = keyRefusal(
    row.owner_role === null
      ? undefined
      : { role: row.owner_role, active: row.owner_active === true, blocked: row.owner_blocked === true },
    row.scopes
  )
  return refusal !== undefined ? { _tag: "KeyRefused", ...refusal } : {
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

/** How long a verdict read from the database is used: a key's, and a refused key's (guesses cost no round trip each). */
const keyMillis = 30_000
const refusedMillis = 5_000

/**
 * A key in use is read again in the background once its verdict is this old
 * (checked every {@link refreshEveryMillis}), before its {@link keyMillis} are
 * up: the requests of a key in use never wait for the database, and each
 * verdict is still at most 30 s old. Keys unused for {@link idleMillis} are left
 * to expire.
 */
const refreshAfterMillis = 20_000
const refreshEveryMillis = 5_000
const idleMillis = 5 * 60_000

/** A verdict and when it was read from the database. */
interface Read {
  readonly verdict: KeyVerdict
  readonly readAt: number
}

/**
 * A verdict in the map of the hot path: until when it may be used, and when it
 * was last asked for. A class, so that every entry has one fixed shape: the
 * object spread this was made with before gave entries whose field reads and
 * `usedAt` writes cost ~1 µs each request (measured: 1,000 ns against 150 ns
 * per hit on 4,000 keys).
 */
class Held implements Read {
  readonly verdict: KeyVerdict
  readonly readAt: number
  readonly expiresAt: number
  usedAt: number
  constructor(read: Read, usedAt: number) {
    this.verdict = read.verdict
    this.readAt = read.readAt
    this.expiresAt = read.readAt + (read.verdict._tag === "Key" ? keyMillis : refusedMillis)
    this.usedAt = usedAt
  }
}

/** Reading one key hash's verdict from the database. */
interface LookUpKey extends Request.Request<Read, SqlError> {
  readonly hash: string
}
const LookUpKey = Request.of<LookUpKey>()

/**
 * The most hashes one statement looks up. Keys the service does not know yet
 * (a restarted replica, clients reconnecting after a deploy) wait for the
 * statement before theirs and then go in one `= ANY(...)` lookup, instead of
 * one statement each: on the embedded database a statement costs ~0.3 ms of
 * the process's CPU. The background refresh reads this many per statement.
 */
const maxLookupBatch = 500

export class VerifiedKeys extends Context.Service<VerifiedKeys, {
  /**
   * The principal of a key hash, or why the key is refused (unknown, revoked,
   * or its owner's state). A database failure is a defect (the request's 500):
   * the hot path, a cache hit, carries no error channel to handle.
   */
  readonly get: (hash: string) => Effect.Effect<KeyVerdict>
  /**
   * The verdict of a key hash when this replica holds a current one, without
   * a step of the effect runtime (the hot path of a key in use); `undefined`
   * when {@link get} must read it.
   */
  readonly peek: (hash: string) => KeyVerdict | undefined
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
      const readAll = (hashes: ReadonlyArray<string>) =>
        Effect.map(repo.findActiveByHashes(hashes), (rows) => {
          const readAt = Date.now()
          const byHash = new Map(rows.map((row) => [row.key_hash, row]))
          return new Map(hashes.map((hash): [string, Read] => [hash, { verdict: toVerdict(byHash.get(hash)), readAt }]))
        })
      const lookups = groupCommit<LookUpKey>({
        maxBatch: maxLookupBatch,
        runAll: (entries) =>
          Effect.matchCause(readAll([...new Set(entries.map((entry) => entry.request.hash))]), {
            onFailure: (cause) => entries.forEach((entry) => entry.completeUnsafe(Exit.failCause(cause))),
            onSuccess: (reads) =>
              entries.forEach((entry) => entry.completeUnsafe(Exit.succeed(reads.get(entry.request.hash)!)))
          })
      })
      const lookup = (hash: string) => Effect.orDie(Effect.request(LookUpKey({ hash }), lookups))
      /**
       * The reads in flight: concurrent misses of one hash share one read. It
       * holds nothing once a read ends (a time to live of zero): the verdict
       * read goes to {@link verdicts}, which alone keeps verdicts.
       */
      const inFlight = yield* Cache.makeWith(lookup, { capacity, timeToLive: () => Duration.zero })
      /**
       * The verdicts of the hot path: a hit is one `Map` read, where effect's
       * `Cache.get` takes the entry out of its map and puts it back (its recency
       * order) and reads the clock through the fiber — ~1.5 µs of every `/v1`
       * request under load, measured, much of it V8 rehashing the 10,000-entry
       * map its deletes leave holes in. Written only in synchronous steps that
       * check {@link generation}; evictions empty it, and take the reads in
       * flight out of {@link inFlight} (a request after an eviction never
       * joins a read begun before it).
       */
      const verdicts = new Map<string, Held>()
      // Bumped by every eviction: a read that started before one must not put what it read in `verdicts`.
      let generation = 0
      const keep = (hash: string, entry: Held) => {
        if (verdicts.size >= capacity) verdicts.clear()
        verdicts.set(hash, entry)
      }
      const peek = (hash: string): KeyVerdict | undefined => {
        // A replica that stopped hearing the channel may have missed an eviction: it asks the database.
        if (!replicas.trusted()) return undefined
        const now = Date.now()
        const hit = verdicts.get(hash)
        if (hit === undefined || hit.expiresAt <= now) return undefined
        hit.usedAt = now
        return hit.verdict
      }
      const get = (hash: string): Effect.Effect<KeyVerdict> => {
        const hit = peek(hash)
        if (hit !== undefined) return Effect.succeed(hit)
        if (!replicas.trusted()) return Effect.map(lookup(hash), (read) => read.verdict)
        const seen = generation
        return Effect.map(Cache.get(inFlight, hash), (read) => {
          if (generation === seen) keep(hash, new Held(read, Date.now()))
          return read.verdict
        })
      }

      /**
       * Reads again, in batches, the keys in use whose verdicts are
       * {@link refreshAfterMillis} old (unless unused for {@link idleMillis}),
       * and forgets the expired. What an eviction overtook while the batch was
       * read is dropped: the next request reads it again.
       */
      const refreshDue = Effect.suspend(() => {
        // A replica that stopped hearing evictions reads every key from the database anyway.
        if (!replicas.trusted()) return Effect.void
        const now = Date.now()
        const due: Array<string> = []
        for (const [hash, entry] of verdicts) {
          if (entry.expiresAt <= now) verdicts.delete(hash)
          else if (
            entry.verdict._tag === "Key" && now - entry.readAt >= refreshAfterMillis && now - entry.usedAt <= idleMillis
          ) due.push(hash)
        }
        return Effect.forEach(Arr.chunksOf(due, maxLookupBatch), (batch) => {
          const seen = generation
          return Effect.map(readAll(batch), (reads) => {
            if (generation !== seen) return
            for (const [hash, read] of reads) {
              const previous = verdicts.get(hash)
              // Replaces an entry: the map does not grow, so no bound to check.
              if (previous !== undefined) verdicts.set(hash, new Held(read, previous.usedAt))
            }
          })
        }, { discard: true })
      })
      yield* refreshDue.pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning(
            "Could not refresh the verified API keys in use; they are read again when they expire",
            cause
          )
        ),
        Effect.repeat(Schedule.spaced(Duration.millis(refreshEveryMillis))),
        Effect.forkScoped
      )

      // The cache the users trigger's owner changes empty.
      replicas.register(ownerChangeCache, {
        evict: (hash) =>
          Effect.andThen(
            Effect.sync(() => {
              generation++
              verdicts.delete(hash)
            }),
            Cache.invalidate(inFlight, hash)
          ),
        clear: Effect.andThen(
          Effect.sync(() => {
            generation++
            verdicts.clear()
          }),
          Cache.invalidateAll(inFlight)
        )
      })

      return VerifiedKeys.of({
        get,
        peek,
        evicting: (target, change) =>
          replicas.evicting(ownerChangeCache, target._tag === "Key" ? target.hash : everything, change)
      })
    })
  ).pipe(Layer.provide(Layer.merge(KeysRepo.layer, ReplicaCaches.layer)))
}
