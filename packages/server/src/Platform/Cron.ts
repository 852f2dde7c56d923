/**
 * The scheduled workers. Each process role runs one worker fiber (`api` in API
 * processes, `jobs` in job processes, both with ROLE=all); after every
 * completed cycle it publishes the time to the key-value store, where
 * `/health` reads it — from any replica, since the store is shared.
 *
 * A step runs in every process that runs its worker (flushing what that
 * process buffered), unless it is wrapped in {@link oncePerCluster}
 * (cleanups): then it runs once per tick of `CRON_INTERVAL_MS` across all the
 * processes on the database, however many job processes there are.
 */
import type { Health } from "@agent-platform/domain"
import { Context, DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as SqlClient from "effect/sql/SqlClient"
import { hostname } from "node:os"
import { ServerConfig } from "./Config.ts"

export type WorkerName = "jobs" | "api"

/** Where a worker publishes its last completed cycle. */
export const tickKey = (worker: WorkerName) => `cron:last_tick:${worker}`

/** One step of a worker's cycle, registered by the feature that owns it. */
export interface CycleStep {
  readonly name: string
  readonly run: Effect.Effect<void>
}

/** Reads and writes the workers' last completed cycles. */
export class CronTicks extends Context.Service<CronTicks, {
  readonly publish: (worker: WorkerName) => Effect.Effect<void, KeyValueStore.KeyValueStoreError>
  readonly read: (worker: WorkerName) => Effect.Effect<Health.CronTick>
  /** The tick a value read from `tickKey(worker)` describes (undefined: never published). */
  readonly fromValue: (value: string | undefined) => Effect.Effect<Health.CronTick>
}>()("@agent-platform/server/Platform/CronTicks") {
  static readonly layer = Layer.effect(
    CronTicks,
    Effect.gen(function*() {
      const kv = yield* KeyValueStore.KeyValueStore
      const config = yield* ServerConfig
      const publish = (worker: WorkerName) =>
        Effect.flatMap(DateTime.now, (now) => kv.set(tickKey(worker), DateTime.formatIso(now)))
      const fromValue = (value: string | undefined) =>
        Effect.gen(function*() {
          const last = value === undefined ? Option.none() : DateTime.make(value)
          if (Option.isNone(last)) return { state: "unknown" as const, last_tick_at: null, age_seconds: null }
          const now = yield* DateTime.now
          const ageMs = Math.max(0, DateTime.toEpochMillis(now) - DateTime.toEpochMillis(last.value))
          const state: Health.CronState = ageMs <= 2 * config.cronIntervalMs ? "ok" : "stale"
          return { state, last_tick_at: DateTime.formatIso(last.value), age_seconds: Math.floor(ageMs / 1000) }
        })
      const read = (worker: WorkerName) =>
        kv.get(tickKey(worker)).pipe(
          Effect.timeout("1 second"),
          Effect.orElseSucceed(() => undefined),
          Effect.flatMap(fromValue)
        )
      return CronTicks.of({ publish, read, fromValue })
    })
  )
}

/**
 * Starts the worker fiber: every `CRON_INTERVAL_MS` it runs its steps, one at
 * a time and each uninterruptible (shutdown waits for the current step, never
 * cuts it), then publishes the tick. A failing step is logged and the cycle
 * goes on.
 */
export const runWorker = (worker: WorkerName, steps: ReadonlyArray<CycleStep>) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* ServerConfig
    const ticks = yield* CronTicks
    const cycle = Effect.gen(function*() {
      for (const step of steps) {
        yield* step.run.pipe(
          Effect.uninterruptible,
          Effect.catchCause((cause) =>
            Effect.logWarning(`cron step ${step.name} failed; it runs again next cycle`, cause)
          )
        )
      }
      yield* ticks.publish(worker).pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not publish the cron tick to the key-value store", cause))
      )
    }).pipe(Effect.annotateLogs({ worker }))
    yield* cycle.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(config.cronIntervalMs))),
      Effect.forkScoped
    )
  }))

/**
 * The first key of the once-per-cluster steps' advisory locks (the second is
 * the step's name hashed): the two-key form keeps them apart from the
 * single-key locks of the audit chains and the bootstrap.
 */
const clusterStepLockClass = 13_000_013

/** Who ran a once-per-cluster step, as recorded in `cron_runs` (and logged). */
const runner = `${hostname()}:${process.pid}`

/**
 * The step, run at most once per tick (`CRON_INTERVAL_MS`, counted on the
 * database's clock) across every process on the database. In one
 * transaction: take the step's transaction-scoped advisory lock without
 * waiting (`pg_try_advisory_xact_lock`: a process that does not get it skips,
 * another is running the step), skip when `cron_runs` says the step already
 * ran in this tick, else record the tick and run the step. A step that fails
 * rolls its tick back, so another process may run it again in the same tick.
 * The lock goes with the transaction, even when the process dies.
 *
 * Embedded PGlite serves one process (its data directory is locked), so there
 * the lock never contends and the tick alone applies.
 */
export const oncePerCluster = (step: CycleStep): Effect.Effect<CycleStep, never, SqlClient.SqlClient | ServerConfig> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { cronIntervalMs } = yield* ServerConfig
    const run = Effect.gen(function*() {
      const [{ locked, tick }] = yield* sql<{ locked: boolean; tick: string }>`
        SELECT pg_try_advisory_xact_lock(${clusterStepLockClass}, hashtext(${step.name})) AS locked,
               floor(extract(epoch FROM now()) * 1000 / ${cronIntervalMs})::bigint::text AS tick`
      if (!locked) return
      const claimed = yield* sql`
        INSERT INTO cron_runs (step, tick, runner) VALUES (${step.name}, ${tick}::bigint, ${runner})
        ON CONFLICT (step) DO UPDATE SET tick = excluded.tick, runner = excluded.runner, ran_at = now()
        WHERE cron_runs.tick < excluded.tick
        RETURNING step`
      if (claimed.length === 0) return
      yield* step.run
      yield* Effect.logInfo(`ran ${step.name} for this tick on behalf of the cluster`).pipe(
        Effect.annotateLogs({ cron_step: step.name, tick, runner })
      )
    })
    return { name: step.name, run: sql.withTransaction(run).pipe(Effect.orDie) }
  })
