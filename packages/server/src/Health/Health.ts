/**
 * The health report (spec: "Health report"): database and key-value checks
 * with short timeouts, the outbound circuit breaker and the workers' cron
 * ticks. Only the database and the key-value store decide `status`.
 */
import { Clock, Context, DateTime, Effect, Layer } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as SqlClient from "effect/sql/SqlClient"
import type { Health as HealthSchema } from "@agent-platform/domain"
import { ModelNames } from "../Ai/ModelNames.ts"
import { CronTicks } from "../Platform/Cron.ts"
import { OutboundBreaker } from "../Platform/OutboundBreaker.ts"
import { ServiceVersion } from "../Platform/ServiceVersion.ts"

const checkTimeout = "2 seconds"

const cronRank: Record<HealthSchema.CronState, number> = { ok: 0, unknown: 1, stale: 2 }

export class Health extends Context.Service<Health, {
  readonly report: Effect.Effect<HealthSchema.HealthReport>
}>()("@agent-platform/server/Health/Health") {
  static readonly layer = Layer.effect(
    Health,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const kv = yield* KeyValueStore.KeyValueStore
      const ticks = yield* CronTicks
      const breaker = yield* OutboundBreaker
      const version = yield* ServiceVersion
      const models = yield* ModelNames

      const probe = (check: Effect.Effect<unknown, unknown>) =>
        check.pipe(
          Effect.timeout(checkTimeout),
          Effect.as("ok" as const),
          Effect.catchCause(() => Effect.succeed("degraded" as const))
        )
      const database = probe(sql`SELECT 1`)
      const keyValue = probe(Effect.flatMap(DateTime.now, (now) => kv.set("health:probe", DateTime.formatIso(now))))

      const report = Effect.gen(function*() {
        const start = yield* Clock.currentTimeMillis
        const [db, kvState, circuit, jobs, api] = yield* Effect.all(
          [database, keyValue, breaker.worstState, ticks.read("jobs"), ticks.read("api")],
          { concurrency: "unbounded" }
        )
        const cron = cronRank[jobs.state] >= cronRank[api.state] ? jobs.state : api.state
        const end = yield* Clock.currentTimeMillis
        const fields = {
          version,
          timestamp: new Date(end).toISOString(),
          latency_ms: end - start,
          checks: { database: db, kv: kvState, circuit_breaker: circuit, cron },
          cron: { state: cron, workers: { jobs, api } },
          models: { language_model: models.languageModel, embedding_model: models.embeddingModel }
        }
        return db === "ok" && kvState === "ok"
          ? { status: "ok" as const, ...fields }
          : { status: "degraded" as const, ...fields }
      })
      return Health.of({ report })
    })
  )
}
