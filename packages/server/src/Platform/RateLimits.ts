/**
 * Per-key rate limits (spec "Limits"): the key's own `rate_limit_rpm` and the
 * endpoint class's limit (chat, ingest, execute 60/min; data 300/min), both
 * per minute; the stricter applies.
 *
 * Each limit is a fixed window: it opens with the key's first request, lasts
 * one minute, and admits exactly `limit` requests; `X-RateLimit-Reset` (and
 * `Retry-After` on a 429) is the time left until that window closes and the
 * whole quota returns. Both windows are checked and counted together, in one
 * step: in memory, or in Redis (a Lua script, atomic on the server; one round
 * trip for all the requests of one turn of the event loop) when `REDIS_URL`
 * is set, so the count is exact across every replica.
 * A refused request counts against nothing, and once a window refused, this
 * replica refuses the key locally until the window closes — a window's count
 * only grows, so that answer cannot change — and a 429 costs no round trip.
 */
import { type RateLimitClass, rateLimitPerMinute } from "@agent-platform/domain"
import { Context, Duration, Effect, Layer, Option } from "effect"
import * as Redis from "effect/persistence/Redis"
import { createHash } from "node:crypto"
import { ServerConfig } from "./Config.ts"
import { type Eager, toEffect } from "./Eager.ts"
import { RedisLive } from "./KeyValue.ts"
import { CurrentRequestInfo, type RequestInfo } from "./RequestInfo.ts"

export interface RateLimitState {
  readonly limit: number
  readonly remaining: number
  /** Seconds until the window closes and the whole quota returns. */
  readonly resetSeconds: number
}

export interface RateLimitOutcome extends RateLimitState {
  readonly allowed: boolean
}

/** Puts a limit's `X-RateLimit-*` headers (and `Retry-After` when refused) on a request's response. */
export const setLimitHeaders = (info: RequestInfo, limit: RateLimitOutcome) => {
  info.responseHeaders["x-ratelimit-limit"] = String(limit.limit)
  info.responseHeaders["x-ratelimit-remaining"] = String(limit.remaining)
  info.responseHeaders["x-ratelimit-reset"] = String(limit.resetSeconds)
  if (!limit.allowed) info.responseHeaders["retry-after"] = String(limit.resetSeconds)
}

/** Puts a limit's `X-RateLimit-*` headers (and `Retry-After` when refused) on the current response. */
export const applyLimitHeaders = (limit: RateLimitOutcome) =>
  Effect.map(Effect.service(CurrentRequestInfo), (info) => setLimitHeaders(info, limit))

/** What a refused caller is told. */
export const exceededMessage = (limit: RateLimitState) =>
  `Rate limit of ${limit.limit} requests per minute exceeded; retry in ${limit.resetSeconds} s.`

/** The length of every window. */
export const windowMs = 60_000

/** One window as a store saw it after the check: its count and the milliseconds until it closes. */
interface WindowState {
  readonly count: number
  readonly ttlMs: number
}

/**
 * What a store answers for the two windows of one request: whether both
 * admitted it (and then both counted it), else which one refused.
 */
interface CheckResult {
  readonly refusedBy: "none" | "class" | "key"
  readonly byClass: WindowState
  readonly byKey: WindowState
}

/** The two windows of one request. */
interface WindowsRequest {
  readonly classKey: string
  readonly classLimit: number
  readonly keyKey: string
  readonly keyLimit: number
}

/**
 * Checks both windows and, when both admit, counts the request in both;
 * atomically: in this process's memory (a synchronous step), or in a store
 * shared by every replica (a round trip).
 */
type CheckWindows =
  | { readonly _tag: "Local"; readonly check: (request: WindowsRequest) => CheckResult }
  | {
    readonly _tag: "Shared"
    readonly check: (request: WindowsRequest) => Effect.Effect<CheckResult, Redis.RedisError>
  }

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

/** The windows of one process: exact, since the check and the count run in one synchronous step. */
const makeMemoryWindows = (): CheckWindows => {
  const windows = new Map<string, { count: number; closesAt: number }>()
  let nextSweep = 0
  const read = (key: string, now: number) => {
    const window = windows.get(key)
    return window === undefined || window.closesAt <= now ? { count: 0, closesAt: now + windowMs } : window
  }
  const check = (request: WindowsRequest): CheckResult => {
    const now = Date.now()
    if (now >= nextSweep) {
      for (const [key, window] of windows) if (window.closesAt <= now) windows.delete(key)
      nextSweep = now + windowMs
    }
    const byClass = read(request.classKey, now)
    const byKey = read(request.keyKey, now)
    const state = (window: { count: number; closesAt: number }): WindowState => ({
      count: window.count,
      ttlMs: window.closesAt - now
    })
    const refusedBy = byClass.count >= request.classLimit ? "class" : byKey.count >= request.keyLimit ? "key" : "none"
    if (refusedBy === "none") {
      byClass.count++
      byKey.count++
      windows.set(request.classKey, byClass)
      windows.set(request.keyKey, byKey)
    }
    return { refusedBy, byClass: state(byClass), byKey: state(byKey) }
  }
  return { _tag: "Local", check }
}

/**
 * The windows of a batch of requests in one Lua script, each request in turn
 * as if it came alone: read both counts and remaining times; refuse without
 * counting when either is full; else count in both (a new window gets its
 * one-minute expiry). KEYS: each request's class window and key window;
 * ARGV: the window in milliseconds, then each request's class limit and key
 * limit. Returns, for each request, refused-by (0 none, 1 class, 2 key), then
 * count and PTTL of each window.
 */
const checkWindowsLua = `
local window = tonumber(ARGV[1])
local function read(key)
  local ttl = redis.call("PTTL", key)
  if ttl < 0 then return 0, window end
  return tonumber(redis.call("GET", key) or "0"), ttl
end
local function count(key, current)
  if current == 0 then
    redis.call("SET", key, 1, "PX", window)
    return 1
  end
  return redis.call("INCR", key)
end
local out = {}
for i = 1, #KEYS, 2 do
  local limits = i + 1
  local classCount, classTtl = read(KEYS[i])
  local keyCount, keyTtl = read(KEYS[i + 1])
  local n = #out
  if classCount >= tonumber(ARGV[limits]) then
    out[n + 1] = 1
  elseif keyCount >= tonumber(ARGV[limits + 1]) then
    out[n + 1] = 2
  else
    out[n + 1] = 0
    classCount = count(KEYS[i], classCount)
    keyCount = count(KEYS[i + 1], keyCount)
  end
  out[n + 2] = classCount
  out[n + 3] = classTtl
  out[n + 4] = keyCount
  out[n + 5] = keyTtl
end
return out
`

/** The script's SHA-1, by which Redis knows it once it has run it (`EVALSHA`). */
const checkWindowsSha = createHash("sha1").update(checkWindowsLua).digest("hex")

/** The numbers the script returns for each request. */
const replyWidth = 5

/** Requests checked in one script at most: a batch holds Redis up for well under a millisecond (~6 µs each). */
const maxWindowsBatch = 64

/** How long a batch waits for Redis; then its requests are allowed (a store that does not answer is a failed one). */
const storeTimeout = Duration.seconds(1)

const timedOut = () =>
  Effect.fail(
    new Redis.RedisError({ cause: new Error(`no answer within ${Duration.format(storeTimeout)}; check REDIS_URL`) })
  )

/** A request waiting for the next batch: its windows, and how to resume its fiber. */
interface Waiting {
  readonly windows: WindowsRequest
  readonly resume: (answer: Effect.Effect<CheckResult, Redis.RedisError>) => void
}

/**
 * The windows in Redis, shared by every replica. The requests of one turn of
 * the event loop go together in one script, sent when the turn ends
 * (`setImmediate`): a busy replica sends one `EVALSHA` per batch instead of one
 * per request. Redis runs scripts on its one thread for every replica, and a
 * script's own cost is most of a lone request's (measured here: 17 µs of
 * script time for a request alone, 6 µs each in batches of seven; under
 * `bench:auth`'s load, batches of ~7, 14 → 9 µs). The script checks the
 * requests in turn, atomically, so the counts are those of the requests one
 * by one. (effect's `RequestResolver` with group commit batched alike at
 * 59 → 85 µs of the service's CPU per request, measured: a fiber and an entry
 * per request, and a wait for the batch in flight.)
 *
 * It is sent by its SHA-1 computed here; a server that does not know the
 * script yet (new, restarted, or `SCRIPT FLUSH`ed) answers `NOSCRIPT`, and
 * the batch sends it whole with `EVAL`, which also keeps it there.
 * (`Redis.eval` does the same with the SHA that `SCRIPT LOAD` answers, kept
 * in an effect `Cache` read on every call.) A batch names the windows of
 * several keys in one script, so `REDIS_URL` must name one Redis server (a
 * primary), not a Redis Cluster, whose scripts may only touch keys of one slot.
 */
const makeRedisWindows = Effect.fnUntraced(function*(redis: Redis.Redis["Service"], prefix: string) {
  const runFork = Effect.runForkWith(yield* Effect.context<never>())
  const script = (waiting: ReadonlyArray<Waiting>) => {
    const args: Array<string> = [String(waiting.length * 2)]
    for (const { windows } of waiting) args.push(`${prefix}${windows.classKey}`, `${prefix}${windows.keyKey}`)
    args.push(String(windowMs))
    for (const { windows } of waiting) args.push(String(windows.classLimit), String(windows.keyLimit))
    return Effect.catchIf(
      redis.send<ReadonlyArray<number>>("EVALSHA", checkWindowsSha, ...args),
      (error) => String(error.cause).includes("NOSCRIPT"),
      () => redis.send<ReadonlyArray<number>>("EVAL", checkWindowsLua, ...args)
    )
  }
  const answer = (reply: ReadonlyArray<number>, i: number): CheckResult => {
    const at = i * replyWidth
    const refusedBy = reply[at]
    return {
      refusedBy: refusedBy === 1 ? "class" : refusedBy === 2 ? "key" : "none",
      byClass: { count: Number(reply[at + 1]), ttlMs: Number(reply[at + 2]) },
      byKey: { count: Number(reply[at + 3]), ttlMs: Number(reply[at + 4]) }
    }
  }
  // A failure is the store's, not a request's: said once for the batch, whose requests are allowed by their caller.
  const send = (waiting: ReadonlyArray<Waiting>) =>
    runFork(
      Effect.matchCauseEffect(Effect.timeoutOrElse(script(waiting), { duration: storeTimeout, orElse: timedOut }), {
        onFailure: (cause) =>
          Effect.logWarning(`rate limits: Redis failed; ${waiting.length} request(s) allowed uncounted`, cause).pipe(
            Effect.andThen(Effect.sync(() => waiting.forEach((w) => w.resume(Effect.failCause(cause)))))
          ),
        onSuccess: (reply) => Effect.sync(() => waiting.forEach((w, i) => w.resume(Effect.succeed(answer(reply, i)))))
      })
    )
  let pending: Array<Waiting> = []
  const flush = () => {
    const waiting = pending
    pending = []
    for (let from = 0; from < waiting.length; from += maxWindowsBatch) {
      send(waiting.slice(from, from + maxWindowsBatch))
    }
  }
  const check = (windows: WindowsRequest) =>
    Effect.callback<CheckResult, Redis.RedisError>((resume) => {
      if (pending.length === 0) setImmediate(flush)
      pending.push({ windows, resume })
    })
  return { _tag: "Shared", check } satisfies CheckWindows
})

/** The names of a key's windows: its own, and its window for one endpoint class. */
interface WindowNames {
  readonly keyKey: string
  readonly classKey: string
}

/** Keys whose window names are kept; beyond, the memo starts over (names are cheap to make again). */
const maxNamedKeys = 50_000

/**
 * The window names of a key and class, made once and then reused: every
 * request of a key looks its windows up by the same string instances, whose
 * hash V8 keeps and which compare by identity, instead of building, hashing
 * and comparing new strings character by character on every request.
 */
const makeWindowNames = () => {
  const byKey = new Map<string, Partial<Record<RateLimitClass, WindowNames>>>()
  return (keyId: string, limitClass: RateLimitClass): WindowNames => {
    let classes = byKey.get(keyId)
    if (classes === undefined) {
      if (byKey.size >= maxNamedKeys) byKey.clear()
      classes = {}
      byKey.set(keyId, classes)
    }
    let names = classes[limitClass]
    if (names === undefined) {
      // The braces were a Redis Cluster hash tag, when a script touched one key's windows only; kept so that
      // replicas of this release and the one before count in the same windows during a rolling upgrade.
      const keyKey = `{${keyId}}`
      names = { keyKey, classKey: `${keyKey}:${limitClass}` }
      classes[limitClass] = names
    }
    return names
  }
}

/** One request of a key: the key, its own limit, and the class of the endpoint it calls. */
export interface ConsumeOptions {
  readonly keyId: string
  readonly keyRpm: number
  readonly limitClass: RateLimitClass
}

export class RateLimits extends Context.Service<RateLimits, {
  /** Counts one request of a key against both limits. */
  readonly consume: (options: ConsumeOptions) => Effect.Effect<RateLimitOutcome>
  /**
   * {@link consume}'s answer, as a plain value when it needs no round trip
   * (the windows are in this process's memory, or a window of the key
   * already refused), else the effect that asks the shared store.
   */
  readonly consumeEager: (options: ConsumeOptions) => Eager<RateLimitOutcome>
}>()("@agent-platform/server/Platform/RateLimits") {
  /** Limits kept by the given store (memory or Redis). */
  static readonly make = (checkWindows: CheckWindows) =>
    Effect.sync(() => {
      // Windows that refused, until they close: a refusal is final for the rest of its window.
      const refusedUntil = new Map<string, { readonly closesAt: number; readonly limit: number }>()
      let nextSweep = 0

      const refusedLocally = (key: string, now: number): RateLimitOutcome | undefined => {
        const refused = refusedUntil.get(key)
        if (refused === undefined) return undefined
        if (refused.closesAt <= now) {
          refusedUntil.delete(key)
          return undefined
        }
        return { allowed: false, limit: refused.limit, remaining: 0, resetSeconds: seconds(refused.closesAt - now) }
      }

      /** What a store's answer means for the request, remembering a refusal until its window closes. */
      const decide = (request: WindowsRequest, result: CheckResult): RateLimitOutcome => {
        if (result.refusedBy !== "none") {
          const [key, limit, window] = result.refusedBy === "class"
            ? [request.classKey, request.classLimit, result.byClass] as const
            : [request.keyKey, request.keyLimit, result.byKey] as const
          const at = Date.now()
          if (at >= nextSweep) {
            for (const [k, refused] of refusedUntil) if (refused.closesAt <= at) refusedUntil.delete(k)
            nextSweep = at + windowMs
          }
          refusedUntil.set(key, { closesAt: at + window.ttlMs, limit })
          return { allowed: false, limit, remaining: 0, resetSeconds: seconds(window.ttlMs) }
        }
        const classRemaining = request.classLimit - result.byClass.count
        const keyRemaining = request.keyLimit - result.byKey.count
        // The stricter limit is the one the headers describe.
        return keyRemaining < classRemaining
          ? {
            allowed: true,
            limit: request.keyLimit,
            remaining: keyRemaining,
            resetSeconds: seconds(result.byKey.ttlMs)
          }
          : {
            allowed: true,
            limit: request.classLimit,
            remaining: classRemaining,
            resetSeconds: seconds(result.byClass.ttlMs)
          }
      }

      const names = makeWindowNames()

      const windowsOf = (options: ConsumeOptions): WindowsRequest => {
        const { classKey, keyKey } = names(options.keyId, options.limitClass)
        return { classKey, classLimit: rateLimitPerMinute[options.limitClass], keyKey, keyLimit: options.keyRpm }
      }
      const refusedNow = (request: WindowsRequest) => {
        const now = Date.now()
        return refusedLocally(request.classKey, now) ?? refusedLocally(request.keyKey, now)
      }

      const consumeEager = (options: ConsumeOptions): Eager<RateLimitOutcome> => {
        const request = windowsOf(options)
        const refused = refusedNow(request)
        if (refused !== undefined) return refused
        // In memory: one synchronous step, nothing can fail.
        if (checkWindows._tag === "Local") return decide(request, checkWindows.check(request))
        return checkWindows.check(request).pipe(
          Effect.map((result) => decide(request, result)),
          // A store failure must not take the API down: allow (the store said so in the logs).
          Effect.catch(() =>
            Effect.succeed<RateLimitOutcome>({
              allowed: true,
              limit: options.keyRpm,
              remaining: options.keyRpm,
              resetSeconds: 60
            })
          )
        )
      }
      return RateLimits.of({
        // Counted when the effect runs, not when it is made.
        consume: (options) => Effect.suspend(() => toEffect(consumeEager(options))),
        consumeEager
      })
    })

  /** In memory, or in Redis when `REDIS_URL` is set (shared by every replica). */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const config = yield* ServerConfig
    return Option.match(config.redisUrl, {
      onNone: () => Layer.effect(RateLimits, RateLimits.make(makeMemoryWindows())),
      onSome: () =>
        Layer.effect(
          RateLimits,
          Effect.flatMap(Redis.Redis, (redis) =>
            Effect.flatMap(makeRedisWindows(redis, `${config.redisPrefix}ratelimit:`), RateLimits.make))
        ).pipe(Layer.provide(RedisLive))
    })
  }))
}
