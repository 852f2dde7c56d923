/**
 * `DATABASE_POOL_SIZE`: how many connections one process opens to
 * PostgreSQL. The setting is read like every other (a bad value stops the
 * start naming the variable) and the pool holds to it under concurrent
 * queries (PostgreSQL run only: the embedded database has one backend).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { serverConfig } from "../src/Platform/Config.ts"
import { layerPostgres } from "../src/Platform/Database.ts"
import { postgresCopy } from "./TestServer.ts"

const postgresUrl = process.env.TEST_DATABASE_URL ?? ""

const readConfig = (env: Record<string, string>) =>
  Effect.provide(serverConfig, ConfigProvider.layer(ConfigProvider.fromUnknown(env)))

describe("DATABASE_POOL_SIZE", () => {
  it.effect("defaults to 20 and takes a positive integer", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* readConfig({})).databasePoolSize, 20)
      assert.strictEqual((yield* readConfig({ DATABASE_POOL_SIZE: "5" })).databasePoolSize, 5)
    }))

  it.effect("refuses zero, naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(readConfig({ DATABASE_POOL_SIZE: "0" }))
      assert.include(String(error), "DATABASE_POOL_SIZE")
    }))

  it.skipIf(postgresUrl === "")(
    "the pool opens at most that many connections under concurrent queries",
    () =>
      Effect.gen(function*() {
        const url = yield* postgresCopy(postgresUrl)
        const peak = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const sessions = sql<{ readonly n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'agent-platform'`
          const counts = yield* Effect.all(
            Array.from({ length: 8 }, () => sql`SELECT pg_sleep(0.1)`.pipe(Effect.andThen(sessions))),
            { concurrency: "unbounded" }
          )
          return Math.max(...counts.map(([row]) => row.n))
        }).pipe(Effect.provide(layerPostgres(Redacted.make(url), 3)))
        assert.isAtMost(peak, 3)
        assert.isAtLeast(peak, 2)
      }).pipe(Effect.scoped, Effect.runPromise)
  )
})
