/**
 * The key-value store: effect's `KeyValueStore`, on Redis when `REDIS_URL` is
 * set (shared by every replica), else on a PostgreSQL table.
 */
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import { Effect, Layer, Option, Redacted } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as Redis from "effect/persistence/Redis"
import type * as SqlClient from "effect/sql/SqlClient"
import { ServerConfig } from "./Config.ts"

const storeError = (method: string) => (cause: unknown) =>
  new KeyValueStore.KeyValueStoreError({ method, message: `Redis ${method} failed`, cause })

/** A KeyValueStore over Redis; every key is namespaced with `prefix`. */
export const makeRedisStore = (redis: Redis.Redis["Service"], prefix: string): KeyValueStore.KeyValueStore => {
  const scanKeys = Effect.gen(function*() {
    const keys: Array<string> = []
    let cursor = "0"
    do {
      const [next, batch] = yield* redis.send<[string, Array<string>]>(
        "SCAN",
        cursor,
        "MATCH",
        `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`,
        "COUNT",
        "500"
      )
      cursor = next
      keys.push(...batch)
    } while (cursor !== "0")
    return keys
  })
  const deleteAll = (keys: ReadonlyArray<string>) =>
    keys.length === 0 ? Effect.void : Effect.asVoid(redis.send("UNLINK", ...keys))
  return KeyValueStore.makeStringOnly({
    get: (key) =>
      redis.send<string | null>("GET", prefix + key).pipe(
        Effect.map((value) => value ?? undefined),
        Effect.mapError(storeError("get"))
      ),
    set: (key, value) => Effect.asVoid(redis.send("SET", prefix + key, value)).pipe(Effect.mapError(storeError("set"))),
    remove: (key) => Effect.asVoid(redis.send("DEL", prefix + key)).pipe(Effect.mapError(storeError("remove"))),
    clear: Effect.flatMap(scanKeys, deleteAll).pipe(Effect.mapError(storeError("clear"))),
    size: Effect.map(scanKeys, (keys) => keys.length).pipe(Effect.mapError(storeError("size"))),
    keys: Effect.map(scanKeys, (keys) => keys.map((key) => key.slice(prefix.length))).pipe(
      Effect.mapError(storeError("keys"))
    )
  })
}

/**
 * The Redis connection of `REDIS_URL`, one per process: a single layer value,
 * so every feature that provides it shares the same connection pool.
 *
 * While the connection is down (the client reconnects by itself), a command
 * fails at once instead of waiting in node-redis's offline queue: every `/v1`
 * request checks its rate limits in Redis, and would otherwise wait for Redis
 * to come back. The rate limits then allow (RateLimits.ts) and `/health` says
 * degraded.
 */
export const RedisLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  if (Option.isNone(config.redisUrl)) return yield* Effect.die(new Error("RedisLive is used without REDIS_URL"))
  return NodeRedis.layer({ url: Redacted.value(config.redisUrl.value), disableOfflineQueue: true })
}))

/** Chooses the KeyValueStore backend from the configuration. */
export const KeyValueLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  const redisStore = Layer.effect(
    KeyValueStore.KeyValueStore,
    Effect.gen(function*() {
      const redis = yield* Redis.Redis
      return makeRedisStore(redis, `${config.redisPrefix}kv:`)
    })
  ).pipe(Layer.provide(RedisLive))
  const sqlStore = KeyValueStore.layerSql({ table: "kv_store" })
  const chosen: Layer.Layer<KeyValueStore.KeyValueStore, Redis.RedisError, SqlClient.SqlClient | ServerConfig> =
    Option.isSome(config.redisUrl) ? redisStore : sqlStore
  return chosen
}))
