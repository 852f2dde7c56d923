/**
 * The SSE body of a chat turn (Chat/ChatHttp.ts `sseBody`): the events in
 * order as `data:` frames, a heartbeat while the turn is quiet, `[DONE]`
 * last, and the events a turn has ready leaving together in one write.
 */
import type { Chat } from "@agent-platform/domain"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Queue, Stream } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { sseBody } from "../src/Chat/ChatHttp.ts"

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
      // As a turn produces them: one event at a time, each offered once the last was taken (ChatEngine).
      const events = Stream.callback<Chat.ChatEvent>((queue) =>
        Effect.andThen(
          Effect.forEach([info, ...words.map((text) => ({ text }))], (event) => Queue.offer(queue, event)),
          Queue.end(queue)
        ), { bufferSize: 1 })
      const body = yield* writes(sseBody(events))
      assert.strictEqual(
        body.join(""),
        [info, ...words.map((text) => ({ text }))].map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") +
          "data: [DONE]\n\n"
      )
      // Five events produced in a row: one write carries them all (a write per event took five).
      assert.isAtMost(body.length, 2)
      assert.include(body[0], "days.")
    }))

  it.effect("sends a heartbeat comment every 15 s while the turn is quiet, and none once it ended", () =>
    Effect.gen(function*() {
      const resume = yield* Deferred.make<void>()
      const events = Stream.concat(
        Stream.make(info),
        Stream.fromEffect(Effect.as(Deferred.await(resume), { text: "Hello." } as Chat.ChatEvent))
      )
      const received: Array<string> = []
      const client = yield* Effect.forkChild(
        Stream.runForEach(sseBody(events), (frame) => Effect.sync(() => received.push(decoder.decode(frame))))
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
    }))
})
