/**
 * The ingestion worker of the jobs role: drains the ingestion queue (batch
 * after batch until nothing is due) every few seconds, and at once when an
 * ingest publishes a wake-up through `Notifications` (when the process
 * provides it; without it the worker just polls). It stops with its scope.
 */
import { Duration, Effect, Layer, Option, Queue, Schedule, Stream } from "effect"
import { ServerConfig } from "../Platform/Config.ts"
import type { CycleStep } from "../Platform/Cron.ts"
import { Notifications } from "../Platform/Notifications.ts"
import { IngestionQueue } from "./IngestionQueue.ts"
import { ingestTopic } from "./KnowledgeFiles.ts"

/** Longest wait between two polls, whatever CRON_INTERVAL_MS says: uploads should not wait long. */
const maxPollInterval = Duration.seconds(5)

/** Processes batches until a batch finds nothing due. */
const drain = Effect.gen(function*() {
  const queue = yield* IngestionQueue
  while ((yield* queue.processDue).claimed > 0) {
    // keep going: more files may be due
  }
})

/** The queue as one step of the jobs worker's cycle, for `runWorker("jobs", [...])`. */
export const cycleStep: Effect.Effect<CycleStep, never, IngestionQueue> = Effect.map(IngestionQueue, (queue) => ({
  name: "knowledge-ingestion",
  run: queue.processDue.pipe(Effect.asVoid, Effect.orDie)
}))

export const IngestionWorker = {
  /** Runs the worker for as long as the layer's scope is open; needs `IngestionQueue` and `ServerConfig`. */
  layer: Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* ServerConfig
    const notifications = yield* Effect.serviceOption(Notifications)
    const interval = Duration.min(Duration.millis(config.cronIntervalMs), maxPollInterval)
    // A sliding queue of one: wake-ups that arrive during a drain collapse into one more drain.
    const wakeUps = yield* Queue.sliding<void>(1)
    if (Option.isSome(notifications)) {
      yield* notifications.value.subscribe(ingestTopic).pipe(
        Stream.runForEach(() => Queue.offer(wakeUps, undefined)),
        Effect.forkScoped
      )
    }
    yield* Queue.offer(wakeUps, undefined).pipe(Effect.repeat(Schedule.spaced(interval)), Effect.forkScoped)
    yield* Queue.take(wakeUps).pipe(
      Effect.andThen(drain),
      Effect.catchCause((cause) => Effect.logWarning("knowledge ingestion failed; retrying on the next cycle", cause)),
      Effect.forever,
      Effect.forkScoped
    )
  }))
}
