/**
 * The ingestion worker of the jobs role: drains the ingestion queue (batch
 * after batch until nothing is due) every few seconds, and at once when an
 * ingest publishes a wake-up through `Notifications` (when the process
 * provides it; without it the worker just polls). It stops with its scope.
 */
import { Duration, Effect, Layer, Option, Queue, Schedule, Stream } from "effect"
import { ServerConfig } from "../Platform/Config.ts"
import type { CycleStep } from "../Platform/Cron.ts"
import { DatabaseMode } from "../Platform/Database.ts"
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

/**
 * Batches in flight at once. On PostgreSQL two lanes, each draining on its
 * own, so that one batch's writes (round trips to the server) overlap another
 * one's chunking and embedding (CPU here): +17 % documents per second in
 * `bench:ingest`; each lane claims its own files (`FOR UPDATE SKIP LOCKED`).
 * Embedded, one: the database works on this event loop too.
 */
const lanesFor = (mode: Option.Option<DatabaseMode["Service"]>) =>
  Option.isSome(mode) && mode.value.kind === "postgres" ? 2 : 1

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
    const lanes = lanesFor(yield* Effect.serviceOption(DatabaseMode))
    const interval = Duration.min(Duration.millis(config.cronIntervalMs), maxPollInterval)
    // Per lane, a sliding queue of one: wake-ups that arrive during its drain collapse into one more drain.
    const wakeUps = yield* Effect.forEach(Array.from({ length: lanes }), () => Queue.sliding<void>(1))
    const wakeAll = Effect.forEach(wakeUps, (lane) => Queue.offer(lane, undefined), { discard: true })
    if (Option.isSome(notifications)) {
      yield* notifications.value.subscribe(ingestTopic).pipe(Stream.runForEach(() => wakeAll), Effect.forkScoped)
    }
    yield* wakeAll.pipe(Effect.repeat(Schedule.spaced(interval)), Effect.forkScoped)
    for (const lane of wakeUps) {
      yield* Queue.take(lane).pipe(
        Effect.andThen(drain),
        Effect.catchCause((cause) =>
          Effect.logWarning("knowledge ingestion failed; retrying on the next cycle", cause)
        ),
        Effect.forever,
        Effect.forkScoped
      )
    }
  }))
}
