/**
 * The scheduled workers. Each process role runs one worker fiber (`api` in API
 * processes, `jobs` in job processes, both with ROLE=all); after every
 * completed cycle it publishes the time to the key-value store, where
 * `/health` reads it — from any replica, since the store is shared.
 */
import type { Health } from "@agent-platform/domain"
import { Context, DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
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
