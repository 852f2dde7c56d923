/**
 * Rate limits (spec "Limits"): a fixed one-minute window per key and per
 * endpoint class, exact under concurrency (in memory, and in Redis when the
 * run has one, where every replica shares the count), with an
 * `X-RateLimit-Reset` that counts down to the moment the quota returns.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { flushScripts } from "./RedisKeys.ts"
import { bearer, createKey, http, json, layer as testServer, serverSuite } from "./TestServer.ts"

const redisUrl = process.env.TEST_REDIS_URL ?? ""

layer(testServer(), serverSuite)("rate limit windows", (it) => {
  it.effect("a key with rate_limit_rpm 100 gets exactly 100 answers out of 150 concurrent requests; the rest 429", () =>
    Effect.gen(function*() {
      const { key } = yield* createKey(["agents"], { rate_limit_rpm: 100 })
      const responses = yield* Effect.all(
        Array.from({ length: 150 }, () => http("/v1/agents", { headers: bearer(key) })),
        { concurrency: 50 }
      )
      const statuses = responses.map((response) => response.status)
      assert.strictEqual(statuses.filter((status) => status === 200).length, 100)
      assert.strictEqual(statuses.filter((status) => status === 429).length, 50)
      // Every answer counted down from a different remaining quota: none was counted twice.
      const remaining = responses.filter((r) => r.status === 200).map((r) =>
        Number(r.headers.get("x-ratelimit-remaining"))
      )
      assert.deepStrictEqual([...remaining].sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i))
    }))

  it.effect("concurrent requests of several keys (checked together in Redis): each key counts exactly its own", () =>
    Effect.gen(function*() {
      const limits = [5, 20, 40]
      const keys = yield* Effect.forEach(limits, (rpm) => createKey(["agents"], { rate_limit_rpm: rpm }))
      // 50 requests of each key, interleaved, so that the batches mix the keys.
      const order = Array.from({ length: 150 }, (_, i) => i % 3)
      const responses = yield* Effect.all(
        order.map((k) =>
          Effect.map(http("/v1/agents", { headers: bearer(keys[k].key) }), (response) => ({ k, response }))
        ),
        { concurrency: 60 }
      )
      limits.forEach((rpm, k) => {
        const mine = responses.filter((r) => r.k === k).map((r) => r.response)
        const served = mine.filter((r) => r.status === 200)
        assert.strictEqual(served.length, rpm)
        assert.strictEqual(mine.filter((r) => r.status === 429).length, 50 - rpm)
        // Each answer saw its own key's count, one request after another: rpm-1 down to 0, each once.
        const remaining = served.map((r) => Number(r.headers.get("x-ratelimit-remaining")))
        assert.deepStrictEqual([...remaining].sort((a, b) => a - b), Array.from({ length: rpm }, (_, i) => i))
        for (const response of mine) assert.strictEqual(response.headers.get("x-ratelimit-limit"), String(rpm))
      })
    }))

  it.effect.skipIf(redisUrl === "")(
    "on Redis: after the server forgets the limits' script (a restart, SCRIPT FLUSH), the next request sends it again and is counted",
    () =>
      Effect.gen(function*() {
        const { key } = yield* createKey(["agents"], { rate_limit_rpm: 3 })
        const first = yield* http("/v1/agents", { headers: bearer(key) })
        assert.strictEqual(first.status, 200)
        assert.strictEqual(first.headers.get("x-ratelimit-remaining"), "2")
        yield* flushScripts(redisUrl)
        // Counted in Redis (a store failure would allow it with the whole quota in its headers).
        const second = yield* http("/v1/agents", { headers: bearer(key) })
        assert.strictEqual(second.status, 200)
        assert.strictEqual(second.headers.get("x-ratelimit-remaining"), "1")
        const third = yield* http("/v1/agents", { headers: bearer(key) })
        assert.strictEqual(third.headers.get("x-ratelimit-remaining"), "0")
        const fourth = yield* http("/v1/agents", { headers: bearer(key) })
        assert.strictEqual(fourth.status, 429)
      })
  )

  it.effect("X-RateLimit-Reset is the seconds until the window that opened with the first request closes", () =>
    Effect.gen(function*() {
      const { key } = yield* createKey(["agents"], { rate_limit_rpm: 2 })
      const opened = Date.now()
      const first = yield* http("/v1/agents", { headers: bearer(key) })
      assert.strictEqual(first.status, 200)
      // A one-minute window, whatever the limit: the whole quota returns 60 s after the first request.
      assert.include([59, 60], Number(first.headers.get("x-ratelimit-reset")))

      yield* Effect.sleep("2100 millis")
      const second = yield* http("/v1/agents", { headers: bearer(key) })
      const third = yield* http("/v1/agents", { headers: bearer(key) })
      const elapsed = (Date.now() - opened) / 1000
      assert.strictEqual(second.status, 200)
      assert.strictEqual(third.status, 429)
      for (const response of [second, third]) {
        const reset = Number(response.headers.get("x-ratelimit-reset"))
        // The same window, counting down: 60 s minus the time since it opened (rounded up).
        assert.isAtMost(reset, 60 - Math.floor(elapsed) + 1)
        assert.isAtLeast(reset, 60 - Math.ceil(elapsed) - 1)
        assert.isAtMost(reset, 58)
      }
      assert.strictEqual(third.headers.get("retry-after"), third.headers.get("x-ratelimit-reset"))
      assert.match(third.body.error, new RegExp(`retry in ${third.headers.get("retry-after")} s`))
    }))

  it.effect("the endpoint class and the key are counted together: the stricter one's headers are sent", () =>
    Effect.gen(function*() {
      const { key } = yield* createKey(["files"], { rate_limit_rpm: 1000 })
      const responses = yield* Effect.all(
        Array.from(
          { length: 70 },
          () =>
            http("/v1/knowledge/ingest", json("POST", { agent_id: "x", filename: "a.txt", content: "x" }, bearer(key)))
        ),
        { concurrency: 20 }
      )
      // Ingest allows 60 a minute: 60 reach the handler (404 for the unknown agent), 10 are refused.
      assert.strictEqual(responses.filter((r) => r.status === 429).length, 10)
      assert.strictEqual(responses.filter((r) => r.status === 404).length, 60)
      for (const response of responses) assert.strictEqual(response.headers.get("x-ratelimit-limit"), "60")
      // A data endpoint has its own class window, untouched by the ingest calls.
      const data = yield* http("/v1/knowledge", { headers: bearer(key) })
      assert.strictEqual(data.status, 200)
      assert.strictEqual(data.headers.get("x-ratelimit-limit"), "300")
      assert.strictEqual(data.headers.get("x-ratelimit-remaining"), "299")
    }))
})
