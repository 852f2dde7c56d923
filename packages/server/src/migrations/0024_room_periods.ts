/**
 * A persistent room lives through periods, each from a reopen (or its
 * creation) to its close; a close's minutes cover its own period.
 * `period_after_seq` is the room chat's last message number when the current
 * period began: the period's messages are those after it. Rooms reopened
 * before this migration start their period at the beginning of their chat.
 *
 * Idempotent (the tests run it again on a migrated database).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE rooms ADD COLUMN IF NOT EXISTS period_after_seq bigint NOT NULL DEFAULT 0`
})
