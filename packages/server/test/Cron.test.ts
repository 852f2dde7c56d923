/**
 * Once-per-cluster steps of the scheduled workers (Platform/Cron.ts): a step
 * wrapped in `oncePerCluster` runs at most once per tick of
 * `CRON_INTERVAL_MS`, however many processes (here: calls) try, on the
 * embedded database and on PostgreSQL. Across real processes:
 * ScaleOut.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { oncePerCluster } from "../src/Platform/Cron.ts"
import { layer as testServer, serverSuite } from "./TestServer.ts"

// An hour per tick: every call of a test falls in the same tick.
layer(testServer({ ROLE: "api", CRON_INTERVAL_MS: "3600000" }), serverSuite)("once-per-cluster steps", (it) => {
  describe("oncePerCluster", () => {
    it.effect("runs the step in the first call of a tick; later calls in the same tick skip it", () =>
      Effect.gen(function*() {
        let runs = 0
        const step = yield* oncePerCluster({ name: "count once", run: Effect.sync(() => void runs++) })
        yield* step.run
        yield* step.run
        yield* Effect.all([step.run, step.run, step.run], { concurrency: "unbounded" })
        assert.strictEqual(runs, 1)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ step: string }>`SELECT step FROM cron_runs WHERE step = 'count once'`
        assert.strictEqual(rows.length, 1)
      }))

    it.effect("a step that fails rolls its tick back: the next call runs it again", () =>
      Effect.gen(function*() {
        let attempts = 0
        const step = yield* oncePerCluster({
          name: "fails first",
          run: Effect.suspend(() => (++attempts === 1 ? Effect.die(new Error("first attempt fails")) : Effect.void))
        })
        yield* Effect.exit(step.run)
        yield* step.run
        yield* step.run
        assert.strictEqual(attempts, 2)
      }))

    it.effect("steps are counted apart: each runs once in the tick", () =>
      Effect.gen(function*() {
        const ran: Array<string> = []
        const a = yield* oncePerCluster({ name: "step a", run: Effect.sync(() => void ran.push("a")) })
        const b = yield* oncePerCluster({ name: "step b", run: Effect.sync(() => void ran.push("b")) })
        yield* a.run
        yield* b.run
        yield* a.run
        yield* b.run
        assert.deepStrictEqual(ran, ["a", "b"])
      }))
  })
})
