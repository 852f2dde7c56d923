/**
 * Admission of chat turns' work (retrieval, the model, actions): at most
 * `concurrency` turns work at once, and a turn about to work first lets a
 * burst of new chats in — it waits while other chats are being opened
 * (request received, first event not yet sent) or were opened less than
 * `settle` ago — for at most `maxDeferral`, so a steady stream of new chats
 * cannot starve the ones already announced. A chat's writes wait for the
 * same calm (`settled`), without the permit.
 *
 * Why: the embedded model and the embedded database run on the process's one
 * event loop, so 200 turns working at once only interleave — each new chat's
 * first event then waits behind slices of all of them, and behind every
 * statement the burst's writes run there. Taking turns in a few at a time
 * costs no throughput (the CPU is the limit either way) and keeps the first
 * event of a burst's last chat close to that of its first.
 */
import { Clock, Duration, Effect, type Scope, Semaphore } from "effect"

export interface Opening {
  /** Ends the chat's opening: its first event is out (idempotent). */
  readonly announced: Effect.Effect<void>
  /**
   * Waits until no other chat is being opened and none was opened after this
   * one for `settle`, or `maxDeferral` passed. A chat alone waits for nothing.
   */
  readonly settled: Effect.Effect<void>
  /** Waits for the turn's right to work, held until the scope closes, then for `settled`. */
  readonly work: Effect.Effect<void, never, Scope.Scope>
}

export interface TurnAdmission {
  /** Counts a chat as being opened until it is announced. */
  readonly opening: Effect.Effect<Opening>
}

export const makeTurnAdmission = (options: {
  readonly concurrency: number
  /** New chats are still arriving when the last one was opened less than this ago... */
  readonly settle: Duration.Input
  /** ...and a turn waits for them at most this long. */
  readonly maxDeferral: Duration.Input
}): Effect.Effect<TurnAdmission> =>
  Effect.gen(function*() {
    const working = yield* Semaphore.make(options.concurrency)
    const settleMs = Duration.toMillis(Duration.fromInputUnsafe(options.settle))
    const maxDeferralMs = Duration.toMillis(Duration.fromInputUnsafe(options.maxDeferral))
    // The chats being opened, by when, oldest first (a Set keeps insertion
    // order). One whose stream never ran (its client left before the response
    // began) is never announced: older than `maxDeferral`, an opening no
    // longer counts, and is forgotten.
    const beingOpened = new Set<{ readonly openedAt: number }>()
    let lastOpenedAt = 0

    /**
     * The chats being opened, `self` aside, forgetting the stale ones. O(1)
     * amortized, for every chat of a burst asks each time it wakes up to look
     * for quiet: the stale are at the front (a clock set back can leave one
     * behind a younger entry, counted until that one goes: at most
     * `maxDeferral` longer).
     */
    const othersOpening = (self: { readonly openedAt: number }, now: number) => {
      for (const entry of beingOpened) {
        if (now - entry.openedAt < maxDeferralMs) break
        beingOpened.delete(entry)
      }
      return beingOpened.size - (beingOpened.has(self) ? 1 : 0)
    }

    const opening = Effect.map(Clock.currentTimeMillis, (openedAt): Opening => {
      const self = { openedAt }
      beingOpened.add(self)
      lastOpenedAt = Math.max(lastOpenedAt, openedAt)
      const settled = Effect.gen(function*() {
        const deadline = (yield* Clock.currentTimeMillis) + maxDeferralMs
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          const calmAt = othersOpening(self, now) > 0
            ? now + settleMs
            : lastOpenedAt > openedAt
            ? lastOpenedAt + settleMs
            : now
          if (calmAt <= now || now >= deadline) return
          yield* Effect.sleep(Math.min(calmAt, deadline) - now)
        }
      })
      return {
        announced: Effect.sync(() => {
          beingOpened.delete(self)
        }),
        settled,
        // The permit first: only the turns about to work watch for quiet.
        work: Effect.andThen(Semaphore.takeScoped(working, 1), settled)
      }
    })

    return { opening }
  })
