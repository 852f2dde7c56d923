/**
 * Per-key rate limits (spec "Limits"): the key's own `rate_limit_rpm` and the
 * endpoint class's limit (chat, ingest, execute 60/min; data 300/min), both
 * per minute; the stricter applies. effect's RateLimiter, in memory or in
 * Redis when `REDIS_URL` is set (shared by every replica).
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { type RateLimitClass, rateLimitPerMinute } from "@agent-platform/domain"
import { ServerConfig } from "./Config.ts"
import { RedisLive } from "./KeyValue.ts"
import { CurrentRequestInfo } from "./RequestInfo.ts"

export interface RateLimitState {
  readonly limit: number
  readonly remaining: number
  /** Seconds until the window resets. */
  readonly resetSeconds: number
}

export interface RateLimitOutcome extends RateLimitState {
  readonly allowed: boolean
}

/** Puts a limit's `X-RateLimit-*` headers (and `Retry-After` when refused) on the current response. */
export const applyLimitHeaders = (limit: RateLimitOutcome) =>
  Effect.gen(function*() {
    const info = yield* CurrentRequestInfo
    info.responseHeaders["x-ratelimit-limit"] = String(limit.limit)
    info.responseHeaders["x-ratelimit-remaining"] = String(limit.remaining)
    info.responseHeaders["x-ratelimit-reset"] = String(limit.resetSeconds)
    if (!limit.allowed) info.responseHeaders["retry-after"] = String(limit.resetSeconds)
  })

/** What a refused caller is told. */
export const exceededMessage = (limit: RateLimitState) =>
  `Rate limit of ${limit.limit} requests per minute exceeded; retry in ${limit.resetSeconds} s.`

export class RateLimits extends Context.Service<RateLimits, {
  /** Counts one request of a key against both limits. */
  readonly consume: (options: {
    readonly keyId: string
    readonly keyRpm: number
    readonly limitClass: RateLimitClass
  }) => Effect.Effect<RateLimitOutcome>
}>()("@agent-platform/server/Platform/RateLimits") {
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      const window = Duration.minutes(1)
      const one = (key: string, limit: number) =>
        limiter.consume({ key, limit, window, algorithm: "fixed-window", onExceeded: "fail" }).pipe(
          Effect.map((result): RateLimitOutcome => ({
            allowed: true,
            limit: result.limit,
            remaining: result.remaining,
            resetSeconds: Math.ceil(Duration.toMillis(result.resetAfter) / 1000)
          })),
          Effect.catch((error) =>
            error.reason._tag === "RateLimitExceeded"
              ? Effect.succeed<RateLimitOutcome>({
                allowed: false,
                limit: error.reason.limit,
                remaining: 0,
                resetSeconds: Math.max(1, Math.ceil(Duration.toMillis(error.reason.retryAfter) / 1000))
              })
              // A store failure must not take the API down: allow, and say so in the logs.
              : Effect.logWarning("rate limiter store failed; request allowed", error).pipe(
                Effect.as<RateLimitOutcome>({ allowed: true, limit, remaining: limit, resetSeconds: 60 })
              )
          )
        )
      const consume = Effect.fnUntraced(function*(options: {
        readonly keyId: string
        readonly keyRpm: number
        readonly limitClass: RateLimitClass
      }) {
        const classLimit = rateLimitPerMinute[options.limitClass]
        // The class limit first: it is usually the stricter, and a refused request then costs the key nothing.
        const byClass = yield* one(`key:${options.keyId}:${options.limitClass}`, classLimit)
        if (!byClass.allowed) return byClass
        const byKey = yield* one(`key:${options.keyId}`, options.keyRpm)
        if (!byKey.allowed) return byKey
        return byKey.remaining < byClass.remaining ? byKey : byClass
      })
      return RateLimits.of({ consume })
    })
  ).pipe(
    Layer.provide(RateLimiter.layer),
    Layer.provide(Layer.unwrap(Effect.gen(function*() {
      const config = yield* ServerConfig
      return Option.match(config.redisUrl, {
        onNone: () => RateLimiter.layerStoreMemory,
        onSome: () => RateLimiter.layerStoreRedis({ prefix: `${config.redisPrefix}ratelimit:` }).pipe(Layer.provide(RedisLive))
      })
    })))
  )
}
