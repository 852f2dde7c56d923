/**
 * Waiting for asynchronous work (a worker's cycle, a batched write) in tests:
 * read until the condition holds, up to a deadline, never sleep-then-assert.
 */
import { Duration, Effect, Schedule } from "effect"

/**
 * Repeats `read` every 100 ms until `done` holds and returns that value; dies
 * naming the deadline when it is not reached within `within` (20 s).
 */
export const eventually = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  done: (value: A) => boolean,
  within: Duration.Input = "20 seconds"
): Effect.Effect<A, E, R> =>
  read.pipe(
    Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: done }),
    Effect.timeoutOrElse({
      duration: within,
      orElse: () =>
        Effect.die(new Error(`condition not reached within ${Duration.format(Duration.fromInputUnsafe(within))}`))
    })
  )
