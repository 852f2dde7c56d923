/**
 * Admission of chat turns' work (Chat/TurnAdmission.ts): a burst of new chats
 * is announced before earlier turns work, a chat alone waits for nothing, a
 * steady stream of chats cannot hold a turn back for more than its bound, and
 * at most `concurrency` turns work at once; a chat's writes wait for the same
 * calm, its own opening aside. On the test clock: no timing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, type Scope } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { makeTurnAdmission } from "../src/Chat/TurnAdmission.ts"

const admission = makeTurnAdmission({ concurrency: 2, settle: "25 millis", maxDeferral: "1 second" })

/** Forks the turn's wait for its right to work, holding it until the fiber ends; `done` tells whether it got it. */
const startWork = (work: Effect.Effect<void, never, Scope.Scope>) =>
  Effect.gen(function*() {
    let admitted = false
    const fiber = yield* Effect.forkChild(Effect.scoped(Effect.andThen(
      work,
      Effect.andThen(Effect.sync(() => (admitted = true)), Effect.never)
    )))
    yield* Effect.yieldNow
    return { fiber, admitted: () => admitted }
  })

describe("TurnAdmission", () => {
  it.effect("a chat alone works as soon as it is announced", () =>
    Effect.gen(function*() {
      const { opening } = yield* admission
      const alone = yield* opening
      yield* alone.announced
      const turn = yield* startWork(alone.work)
      assert.isTrue(turn.admitted())
      yield* Fiber.interrupt(turn.fiber)
    }))

  it.effect("a turn waits while other chats are being opened, then until none arrived for the settle time", () =>
    Effect.gen(function*() {
      const { opening } = yield* admission
      const first = yield* opening
      const second = yield* opening
      yield* first.announced
      const turn = yield* startWork(first.work)
      assert.isFalse(turn.admitted(), "the second chat is still being opened")
      yield* TestClock.adjust("100 millis")
      assert.isFalse(turn.admitted())
      yield* second.announced
      yield* TestClock.adjust("10 millis")
      assert.isFalse(turn.admitted(), "chats may still be arriving")
      yield* TestClock.adjust("25 millis")
      assert.isTrue(turn.admitted())
      yield* Fiber.interrupt(turn.fiber)
    }))

  it.effect("chats that keep arriving hold a turn back for at most the bound", () =>
    Effect.gen(function*() {
      const { opening } = yield* admission
      const first = yield* opening
      yield* first.announced
      yield* opening // never announced
      const turn = yield* startWork(first.work)
      yield* TestClock.adjust("999 millis")
      assert.isFalse(turn.admitted())
      yield* TestClock.adjust("1 millis")
      assert.isTrue(turn.admitted())
      yield* Fiber.interrupt(turn.fiber)
    }))

  it.effect("a chat never announced (its client left before the stream ran) stops holding others after the bound", () =>
    Effect.gen(function*() {
      const { opening } = yield* admission
      yield* opening // never announced
      yield* TestClock.adjust("1 second")
      const later = yield* opening
      yield* later.announced
      const turn = yield* startWork(later.work)
      yield* TestClock.adjust("25 millis")
      assert.isTrue(turn.admitted(), "the forgotten opening no longer counts")
      yield* Fiber.interrupt(turn.fiber)
    }))

  it.effect("a chat's writes wait for the other chats being opened, not for its own announcement", () =>
    Effect.gen(function*() {
      const { opening } = yield* admission
      const first = yield* opening
      const alone = yield* Effect.forkChild(first.settled)
      yield* Effect.yieldNow
      assert.isDefined(alone.pollUnsafe(), "a chat alone, even before its first event, waits for nothing")
      const second = yield* opening
      const writes = yield* Effect.forkChild(first.settled)
      yield* TestClock.adjust("100 millis")
      assert.isUndefined(writes.pollUnsafe(), "the second chat is still being opened")
      yield* second.announced
      yield* TestClock.adjust("25 millis")
      assert.isDefined(writes.pollUnsafe())
      yield* first.announced
    }))

  it.effect("at most `concurrency` turns work at once; the next works when one ends", () =>
    Effect.gen(function*() {
      const { opening } = yield* admission
      const chats = yield* Effect.all([opening, opening, opening])
      yield* Effect.forEach(chats, (chat) => chat.announced)
      yield* TestClock.adjust("25 millis")
      const turns = yield* Effect.forEach(chats, (chat) => startWork(chat.work))
      assert.deepStrictEqual(turns.map((turn) => turn.admitted()), [true, true, false])
      yield* Fiber.interrupt(turns[0].fiber)
      yield* Effect.yieldNow
      assert.isTrue(turns[2].admitted())
      yield* Effect.forEach(turns, (turn) => Fiber.interrupt(turn.fiber))
    }))
})
