/**
 * Signing-secret rotation of webhook subscriptions: the secret that was
 * current before the last rotation, encrypted like `signing_secret`, stays
 * valid (deliveries are signed with both) until `previous_signing_secret_expires_at`.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE webhook_subscriptions
      ADD COLUMN previous_signing_secret text,
      ADD COLUMN previous_signing_secret_expires_at timestamptz`
})
