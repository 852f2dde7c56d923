/** The health report (spec: "Health report"). */
import { Schema } from "effect"

export const CheckState = Schema.Literals(["ok", "degraded"])
export const BreakerState = Schema.Literals(["closed", "half-open", "open"])
export const CronState = Schema.Literals(["ok", "stale", "unknown"])
export type CronState = typeof CronState.Type

/** The last completed cycle of one scheduled worker. */
export const CronTick = Schema.Struct({
  state: CronState,
  last_tick_at: Schema.NullOr(Schema.String).annotate({ description: "ISO 8601 time of the last completed cycle" }),
  age_seconds: Schema.NullOr(Schema.Int)
})
export type CronTick = typeof CronTick.Type

const reportFields = {
  version: Schema.String.annotate({ description: "Version of the running service" }),
  timestamp: Schema.String.annotate({ description: "ISO 8601 time of this report" }),
  latency_ms: Schema.Int.annotate({ description: "Time taken to run the checks" }),
  checks: Schema.Struct({
    database: CheckState,
    kv: CheckState,
    circuit_breaker: BreakerState,
    cron: CronState
  }),
  cron: Schema.Struct({
    state: CronState,
    workers: Schema.Struct({ jobs: CronTick, api: CronTick })
  }),
  models: Schema.Struct({
    language_model: Schema.String,
    embedding_model: Schema.String
  }).annotate({
    description: "The models chat and knowledge use (the embedded local model unless a provider is configured)"
  })
}

/** 200: database and key-value store answer. Cron never changes the status. */
export const HealthOk = Schema.Struct({ status: Schema.Literal("ok"), ...reportFields }).annotate({
  identifier: "HealthReport",
  httpApiStatus: 200
})

/** 503: the database or the key-value store is degraded. */
export const HealthDegraded = Schema.Struct({ status: Schema.Literal("degraded"), ...reportFields }).annotate({
  identifier: "HealthReportDegraded",
  httpApiStatus: 503
})

export type HealthReport = typeof HealthOk.Type | typeof HealthDegraded.Type
