/**
 * The health report (spec: "Health report"): database and key-value checks
 * with short timeouts, the outbound circuit breaker and the workers' cron
 * ticks. Only the database and the key-value store decide `status`.
 *
 * Load balancers and monitors call it often and all at once, so it must stay
 * cheap under load: concurrent callers share one probe (single-flight), and
 * its report answers every call for `reuseWindow` after it finished. The
 * key-value check reads (the workers' ticks), never writes.
 */
import type { Health as HealthSchema } from "@agent-platform/domain"
import { Clock, Context, Effect, Layer } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as SqlClient from "effect/sql/SqlClient"
import { ModelNames } from "../Ai/ModelNames.ts"
import { CronTicks, tickKey } from "../Platform/Cron.ts"
import { OutboundBreaker } from "../Platform/OutboundBreaker.ts"
import { ServiceVersion } from "../Platform/ServiceVersion.ts"

const checkTimeout = "2 seconds"

/** How long one probe's report answers later calls: at most one probe per second per process. */
export const reuseWindow = "1 second"

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
      // A read of what the workers write: proves the store answers without adding a write per call.
      const keyValue = kv.get(tickKey("jobs")).pipe(
        Effect.timeout(checkTimeout),
        Effect.flatMap((value) => Effect.map(ticks.fromValue(value), (jobs) => ["ok" as const, jobs] as const)),
        Effect.catchCause(() => Effect.map(ticks.fromValue(undefined), (jobs) => ["degraded" as const, jobs] as const))
      )

      const probeAll = Effect.gen(function*() {
        const start = yield* Clock.currentTimeMillis
        const [db, [kvState, jobs], circuit, api] = yield* Effect.all(
          [database, keyValue, breaker.worstState, ticks.read("api")],
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
      const report = yield* Effect.cachedWithTTL(probeAll, reuseWindow)
      return Health.of({ report })
    })
  )
}
