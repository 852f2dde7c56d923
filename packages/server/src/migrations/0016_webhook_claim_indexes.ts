/**
 * Indexes for claiming webhook deliveries per subscription: the open ones
 * (pending or delivering) of each subscription in queue order, and the
 * leased ones of each subscription. With them a claim reads, per
 * subscription with open deliveries, only its oldest few, instead of sorting
 * every due delivery of the queue; a backlog no longer makes each claim slower.
 * The two indexes the old claim read (by due time, by lease expiry) are
 * dropped: every claim and every outcome would otherwise update them too.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX webhook_deliveries_open_idx ON webhook_deliveries (subscription_id, seq)
    WHERE status IN ('pending', 'delivering')`
  yield* sql`
    CREATE INDEX webhook_deliveries_busy_idx ON webhook_deliveries (subscription_id, locked_until)
    WHERE status = 'delivering'`
  yield* sql`DROP INDEX webhook_deliveries_due_idx`
  yield* sql`DROP INDEX webhook_deliveries_leased_idx`
})
