/**
 * Admission of chat turns' work (retrieval, the model, actions): at most
 * `concurrency` turns work at once, and a turn about to work first lets the
 * chats being opened (request received, first event not yet sent) get their
 * first event — for at most `maxDeferral`, so a steady stream of new chats
 * cannot starve the ones already announced.
 *
 * Why: the embedded model and the embedded database run on the process's one
 * event loop, so 200 turns working at once only interleave — each new chat's
 * first event then waits behind slices of all of them. Taking turns in a few
 * at a time costs no throughput (the CPU is the limit either way) and keeps
 * the first event of a burst's last chat close to that of its first.
 */
import { Duration, Effect, Latch, type Scope, Semaphore } from "effect"

export interface TurnAdmission {
  /** Counts a chat as being opened until the returned effect runs (idempotent). */
  readonly opening: Effect.Effect<Effect.Effect<void>>
  /** Waits for the turn's right to work, held until the scope closes. */
  readonly work: Effect.Effect<void, never, Scope.Scope>
}

export const makeTurnAdmission = (options: {
  readonly concurrency: number
  readonly maxDeferral: Duration.Input
}): Effect.Effect<TurnAdmission> =>
  Effect.gen(function*() {
    const working = yield* Semaphore.make(options.concurrency)
    const maxDeferral = Duration.fromInputUnsafe(options.maxDeferral)
    /** Open while no chat is being opened. */
    const quiet = Latch.makeUnsafe(true)
    let opened = 0

    const opening = Effect.sync(() => {
      if (opened++ === 0) Latch.closeUnsafe(quiet)
      let done = false
      return Effect.sync(() => {
        if (done) return
        done = true
        if (--opened === 0) Latch.openUnsafe(quiet)
      })
    })

    const work = Effect.andThen(
      Effect.timeoutOption(Latch.await(quiet), maxDeferral),
      Semaphore.takeScoped(working, 1)
    )

    return { opening, work }
  })
