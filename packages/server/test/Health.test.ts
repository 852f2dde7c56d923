import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as SqlClient from "effect/sql/SqlClient"
import { eventually } from "./Eventually.ts"
import { layer as testServer, serverSuite, TestServer } from "./TestServer.ts"

/** GET /health as a plain HTTP client sees it. */
const health = Effect.gen(function*() {
  const server = yield* TestServer
  const response = yield* Effect.promise(() => fetch(`${server.baseUrl}/health`))
  const body: any = yield* Effect.promise(() => response.json())
  return { status: response.status, body }
})

/**
 * Polls GET /health until `done` holds (a report answers calls for up to a
 * second after its probe, so a change shows within about a second).
 */
const healthUntil = (done: (report: { readonly status: number; readonly body: any }) => boolean) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 15_000
    for (;;) {
      const report = yield* health
      if (done(report)) return report
      if (Date.now() > deadline) {
        return assert.fail(`GET /health never got there; last: ${report.status} ${JSON.stringify(report.body)}`)
      }
      yield* Effect.sleep("100 millis")
    }
  })

layer(testServer({ CRON_INTERVAL_MS: "300" }), serverSuite)("GET /health", (it) => {
  it.effect("answers 200 with every check ok once both workers have ticked", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = yield* server.client()
      const report = yield* eventually(
        client.api.health(),
        (report) => report.cron.workers.jobs.state === "ok" && report.cron.workers.api.state === "ok"
      )
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
    it.effect("concurrent callers share one probe, and no call writes to the key-value store", () =>
      Effect.gen(function*() {
        const reports = yield* Effect.all(Array.from({ length: 40 }, () => health), { concurrency: "unbounded" })
        assert.isTrue(reports.every((report) => report.status === 200))
        // One probe answers them all (two when the burst straddles the end of a reuse window).
        const probes = new Set(reports.map((report) => report.body.timestamp))
        assert.isAtMost(probes.size, 2)
        assert.isUndefined(yield* (yield* KeyValueStore.KeyValueStore).get("health:probe"))
      }))

    it.effect("reports the jobs worker as unknown until it has ticked, without changing the status", () =>
      Effect.gen(function*() {
        const { status, body } = yield* eventually(health, ({ body }) => body.cron.workers.api.state === "ok")
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
        const { status, body } = yield* healthUntil(({ body }) => body.cron.workers.jobs.state !== "unknown")
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
        const during = yield* healthUntil(({ status }) => status !== 200).pipe(
          Effect.ensuring(sql`ALTER TABLE kv_store_unavailable RENAME TO kv_store`.pipe(Effect.orDie))
        )
        assert.strictEqual(during.status, 503)
        assert.strictEqual(during.body.status, "degraded")
        assert.strictEqual(during.body.checks.kv, "degraded")
        assert.strictEqual(during.body.checks.database, "ok")
        const after = yield* healthUntil(({ status }) => status === 200)
        assert.strictEqual(after.body.checks.kv, "ok")
      }))
  }
)
