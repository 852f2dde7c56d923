import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as SqlClient from "effect/sql/SqlClient"
import { serverSuite, TestServer, layer as testServer } from "./TestServer.ts"

/** GET /health as a plain HTTP client sees it. */
const health = Effect.gen(function*() {
  const server = yield* TestServer
  const response = yield* Effect.promise(() => fetch(`${server.baseUrl}/health`))
  const body: any = yield* Effect.promise(() => response.json())
  return { status: response.status, body }
})

layer(testServer({ CRON_INTERVAL_MS: "300" }), serverSuite)("GET /health", (it) => {
  it.effect("answers 200 with every check ok once both workers have ticked", () =>
    Effect.gen(function*() {
      yield* Effect.sleep("800 millis")
      const server = yield* TestServer
      const client = yield* server.client()
      const report = yield* client.api.health()
      assert.strictEqual(report.status, "ok")
      assert.strictEqual(report.version, "5.25.0")
      assert.deepStrictEqual(report.checks, { database: "ok", kv: "ok", circuit_breaker: "closed", cron: "ok" })
      assert.strictEqual(report.cron.state, "ok")
      assert.strictEqual(report.cron.workers.jobs.state, "ok")
      assert.strictEqual(report.cron.workers.api.state, "ok")
      assert.isTrue((report.cron.workers.jobs.age_seconds ?? 99) <= 1)
      assert.isNotNull(report.cron.workers.api.last_tick_at)
      assert.isTrue(report.latency_ms >= 0)
      assert.match(report.models.language_model, /embedded/)
    }))
})

layer(testServer({ ROLE: "api", CRON_INTERVAL_MS: "300" }, { redis: false }), serverSuite)(
  "GET /health in an api-only process",
  (it) => {
    it.effect("reports the jobs worker as unknown until it has ticked, without changing the status", () =>
      Effect.gen(function*() {
        yield* Effect.sleep("800 millis")
        const { status, body } = yield* health
        assert.strictEqual(status, 200)
        assert.strictEqual(body.status, "ok")
        assert.strictEqual(body.cron.workers.api.state, "ok")
        assert.deepStrictEqual(body.cron.workers.jobs, { state: "unknown", last_tick_at: null, age_seconds: null })
        assert.strictEqual(body.checks.cron, "unknown")
      }))

    it.effect("reports a worker whose last tick is older than two intervals as stale, still 200", () =>
      Effect.gen(function*() {
        const kv = yield* KeyValueStore.KeyValueStore
        yield* kv.set("cron:last_tick:jobs", new Date(Date.now() - 60_000).toISOString())
        const { status, body } = yield* health
        assert.strictEqual(status, 200)
        assert.strictEqual(body.status, "ok")
        assert.strictEqual(body.cron.workers.jobs.state, "stale")
        assert.isTrue(body.cron.workers.jobs.age_seconds >= 59)
        assert.strictEqual(body.cron.state, "stale")
        assert.strictEqual(body.checks.cron, "stale")
      }))

    it.effect("answers 503 degraded when the key-value store fails", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`ALTER TABLE kv_store RENAME TO kv_store_unavailable`
        const during = yield* health.pipe(Effect.ensuring(sql`ALTER TABLE kv_store_unavailable RENAME TO kv_store`.pipe(Effect.orDie)))
        assert.strictEqual(during.status, 503)
        assert.strictEqual(during.body.status, "degraded")
        assert.strictEqual(during.body.checks.kv, "degraded")
        assert.strictEqual(during.body.checks.database, "ok")
        const after = yield* health
        assert.strictEqual(after.status, 200)
        assert.strictEqual(after.body.checks.kv, "ok")
      }))
  }
)
