/**
 * An answer that is often ready at once: the value itself when nothing had
 * to wait (a cache hit, a count in memory), else the effect that gets it.
 * The hot path of `/v1` chains such answers as plain values and takes a step
 * of the effect runtime only when one of them really waits.
 *
 * Only for answers that are never effects themselves (plain records).
 */
import { Effect } from "effect"

export type Eager<A, E = never> = A | Effect.Effect<A, E>

/** The answer as an effect (an eager value succeeds at once). */
export const toEffect = <A, E>(answer: Eager<A, E>): Effect.Effect<A, E> =>
  Effect.isEffect(answer) ? answer as Effect.Effect<A, E> : Effect.succeed(answer as A)
