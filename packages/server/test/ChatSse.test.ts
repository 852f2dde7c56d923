/**
 * The SSE body of a chat turn (Chat/ChatHttp.ts `sseBody`): the events in
 * order as `data:` frames, a heartbeat while the turn is quiet, `[DONE]`
 * last, the events a turn has ready leaving together in one write, and a
 * turn cut short when the client leaves.
 */
import type { Chat } from "@agent-platform/domain"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref, Stream } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { sseBody } from "../src/Chat/ChatHttp.ts"
import { SseHeartbeats } from "../src/Chat/SseHeartbeats.ts"

const decoder = new TextDecoder()
const info: Chat.ChatEvent = { type: "agent_info", agent_id: "a", agent_name: "Helper", chat_id: "c" }
const words = ["Refunds ", "take ", "14 ", "days."]

/** The body's writes as text: one string per chunk the response would write. */
const writes = (body: Stream.Stream<Uint8Array>) =>
  Stream.runCollect(Stream.mapArray(body, (chunk) => [chunk.map((frame) => decoder.decode(frame)).join("")])).pipe(
    Effect.map((chunks) => [...chunks])
  )

describe("sseBody", () => {
  it.effect("sends the events as data: frames in order, then [DONE]; ready events leave in one write", () =>
    Effect.gen(function*() {
      const heartbeats = yield* SseHeartbeats
      // As a turn produces them: one event at a time, each handed over once the last was taken (ChatEngine).
      const turn = (emit: (event: Chat.ChatEvent) => Effect.Effect<void>) =>
        Effect.forEach([info, ...words.map((text) => ({ text }))], emit, { discard: true })
      const body = yield* writes(sseBody(heartbeats, turn))
      assert.strictEqual(
        body.join(""),
        [info, ...words.map((text) => ({ text }))].map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") +
          "data: [DONE]\n\n"
      )
      // Five events produced in a row: one write carries them all (a write per event took five).
      assert.isAtMost(body.length, 2)
      assert.include(body[0], "days.")
    }).pipe(Effect.provide(SseHeartbeats.layer)))

  it.effect("sends a heartbeat comment every 15 s while the turn is quiet, and none once it ended", () =>
    Effect.gen(function*() {
      const heartbeats = yield* SseHeartbeats
      const resume = yield* Deferred.make<void>()
      const turn = (emit: (event: Chat.ChatEvent) => Effect.Effect<void>) =>
        emit(info).pipe(Effect.andThen(Deferred.await(resume)), Effect.andThen(emit({ text: "Hello." })))
      const received: Array<string> = []
      const client = yield* Effect.forkChild(
        Stream.runForEach(sseBody(heartbeats, turn), (frame) => Effect.sync(() => received.push(decoder.decode(frame))))
      )
      yield* TestClock.adjust("14 seconds")
      assert.deepStrictEqual(received, [`data: ${JSON.stringify(info)}\n\n`])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(received.slice(1), [": ping\n\n"])
      yield* TestClock.adjust("15 seconds")
      assert.deepStrictEqual(received.slice(1), [": ping\n\n", ": ping\n\n"])
      yield* Deferred.succeed(resume, undefined)
      yield* Fiber.join(client)
      assert.deepStrictEqual(received.slice(3), [`data: ${JSON.stringify({ text: "Hello." })}\n\n`, "data: [DONE]\n\n"])
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(received.length, 5)
    }).pipe(Effect.provide(SseHeartbeats.layer)))

  it.effect("a client that leaves interrupts the turn: it stops producing, and its finalizer runs", () =>
    Effect.gen(function*() {
      const heartbeats = yield* SseHeartbeats
      const produced = yield* Ref.make(0)
      const finished = yield* Deferred.make<void>()
      // A turn that would speak forever.
      const turn = (emit: (event: Chat.ChatEvent) => Effect.Effect<void>) =>
        Effect.forever(Effect.andThen(emit({ text: "word " }), Ref.update(produced, (n) => n + 1))).pipe(
          Effect.ensuring(Deferred.succeed(finished, undefined))
        )
      // The client reads three writes and leaves.
      const read = yield* Stream.runCollect(Stream.take(sseBody(heartbeats, turn), 3))
      assert.strictEqual(read.length, 3)
      yield* Deferred.await(finished)
      const count = yield* Ref.get(produced)
      // Held back by the response's buffer: at most its 64 frames beyond what the client read.
      assert.isAtMost(count, 3 + 64 + 1)
      yield* Effect.yieldNow
      assert.strictEqual(yield* Ref.get(produced), count)
    }).pipe(Effect.provide(SseHeartbeats.layer)))
})
