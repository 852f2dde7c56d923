/**
 * Push deliveries take the webhook deliveries' claim token: each claim leases
 * a delivery under a fresh `claim_token`, and an outcome (or the lease given
 * back) is written only by the holder of the current token, so a worker whose
 * lease ran out cannot overwrite what the worker that took the delivery over
 * recorded. A delivery leased before this migration has no token; its lease
 * expires and the next claim gives it one.
 *
 * Idempotent (the tests run it again on a migrated database).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE push_deliveries ADD COLUMN IF NOT EXISTS claim_token uuid`
})
