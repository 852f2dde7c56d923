/** The push_subscriptions table and the users' push preference (`users.push_opt_out`). */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface SubscriptionRow {
  readonly id: string
  readonly user_id: string
  readonly endpoint: string
  readonly p256dh: string
  readonly auth: string
  readonly created_at: Date
}

export class PushSubscriptionsRepo extends Context.Service<PushSubscriptionsRepo, {
  /** Registers an endpoint for the user (taking it over from whoever had it); `created` false when it was theirs already. */
  readonly upsert: (input: {
    readonly tenantId: string
    readonly userId: string
    readonly endpoint: string
    readonly p256dh: string
    readonly auth: string
  }) => Effect.Effect<{ readonly row: SubscriptionRow; readonly created: boolean }, SqlError>
  readonly listOf: (tenantId: string, userId: string) => Effect.Effect<ReadonlyArray<SubscriptionRow>, SqlError>
  readonly find: (id: string) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  /** Deletes the user's subscription; false when it is not theirs. */
  readonly remove: (tenantId: string, userId: string, id: string) => Effect.Effect<boolean, SqlError>
  /** Deletes a subscription the push service no longer knows (404 / 410). */
  readonly forget: (id: string) => Effect.Effect<void, SqlError>
  readonly optedOut: (tenantId: string, userId: string) => Effect.Effect<boolean, SqlError>
  readonly setOptOut: (tenantId: string, userId: string, optOut: boolean) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Push/PushSubscriptionsRepo") {
  static readonly layer = Layer.effect(
    PushSubscriptionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql.literal("id, user_id, endpoint, p256dh, auth, created_at")
      return PushSubscriptionsRepo.of({
        upsert: (input) =>
          Effect.map(
            sql<SubscriptionRow & { previous_user: string | null }>`
              WITH previous AS (SELECT user_id FROM push_subscriptions WHERE endpoint = ${input.endpoint})
              INSERT INTO push_subscriptions (tenant_id, user_id, endpoint, p256dh, auth)
              VALUES (${input.tenantId}, ${input.userId}, ${input.endpoint}, ${input.p256dh}, ${input.auth})
              ON CONFLICT (endpoint) DO UPDATE SET
                tenant_id = EXCLUDED.tenant_id, user_id = EXCLUDED.user_id, p256dh = EXCLUDED.p256dh,
                auth = EXCLUDED.auth, updated_at = now()
              RETURNING ${columns}, (SELECT user_id FROM previous) AS previous_user`,
            (rows) => ({ row: rows[0], created: rows[0].previous_user !== input.userId })
          ),
        listOf: (tenantId, userId) =>
          sql<SubscriptionRow>`
            SELECT ${columns} FROM push_subscriptions WHERE tenant_id = ${tenantId} AND user_id = ${userId} ORDER BY created_at, id`,
        find: (id) =>
          Effect.map(
            sql<SubscriptionRow>`SELECT ${columns} FROM push_subscriptions WHERE id = ${id}`,
            (rows) => rows[0]
          ),
        remove: (tenantId, userId, id) =>
          Effect.map(
            sql`DELETE FROM push_subscriptions WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND id = ${id} RETURNING id`,
            (rows) => rows.length > 0
          ),
        forget: (id) => Effect.asVoid(sql`DELETE FROM push_subscriptions WHERE id = ${id}`),
        optedOut: (tenantId, userId) =>
          Effect.map(
            sql<
              { push_opt_out: boolean }
            >`SELECT push_opt_out FROM users WHERE tenant_id = ${tenantId} AND id = ${userId}`,
            (rows) => rows[0]?.push_opt_out ?? true
          ),
        setOptOut: (tenantId, userId, optOut) =>
          Effect.asVoid(
            sql`UPDATE users SET push_opt_out = ${optOut}, updated_at = now() WHERE tenant_id = ${tenantId} AND id = ${userId}`
          )
      })
    })
  )
}
