/**
 * The last cycle (tick) in which each once-per-cluster step of the scheduled
 * workers ran (Platform/Cron.ts): a job process skips a step another process
 * already ran in the current tick.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE cron_runs (
      step text PRIMARY KEY,
      tick bigint NOT NULL,
      runner text NOT NULL,
      ran_at timestamptz NOT NULL DEFAULT now()
    )`
})
