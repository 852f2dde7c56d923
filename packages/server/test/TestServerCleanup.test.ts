/**
 * The test fixture's own hygiene: a test server on Redis leaves no key behind
 * once it stops, though its workers keep writing keys without expiry (their
 * last cron tick) until they stop. Runs only with TEST_REDIS_URL.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { eventually } from "./Eventually.ts"
import { keysUnder } from "./RedisKeys.ts"
import { layer as testServer } from "./TestServer.ts"

const redisUrl = process.env.TEST_REDIS_URL ?? ""

describe.skipIf(redisUrl === "")("the test server on Redis", () => {
  it.live("deletes its keys once its workers have stopped, the last tick included", () =>
    Effect.gen(function*() {
      const prefix = `ap-test:${crypto.randomUUID()}:`
      yield* Effect.scoped(Effect.gen(function*() {
        // A tick every 50 ms: the workers write right up to the moment they stop.
        yield* Layer.build(testServer({ CRON_INTERVAL_MS: "50" }, { redisPrefix: prefix }))
        const written = yield* eventually(keysUnder(redisUrl, prefix), (keys) =>
          keys.some((key) => key.includes("last_tick")))
        assert.isAbove(written.length, 0)
      }))
      assert.deepStrictEqual(yield* keysUnder(redisUrl, prefix), [])
    }), { timeout: 180_000 })
})
