/** The push_subscriptions table and the users' push preference (`users.push_opt_out`). */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface SubscriptionRow {
  readonly id: string
  readonly tenant_id: string
  readonly user_id: string
  readonly endpoint: string
  readonly p256dh: string
  readonly auth: string
  readonly created_at: Date
}

/** A browser's registration, as the user hands it over. */
export interface Registration {
  readonly tenantId: string
  readonly userId: string
  readonly endpoint: string
  readonly p256dh: string
  readonly auth: string
}

export class PushSubscriptionsRepo extends Context.Service<PushSubscriptionsRepo, {
  /** Registers an endpoint for the user, or updates their own; undefined when it is another account's (left as it is). */
  readonly register: (registration: Registration) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  /** Whoever holds the endpoint, with the keys it was registered with. */
  readonly findByEndpoint: (endpoint: string) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  /**
   * Gives `previous` (another account's subscription to the same endpoint) to
   * the registering user as a new subscription, its queued pushes dropped;
   * undefined when `previous` changed meanwhile.
   */
  readonly takeOver: (
    registration: Registration,
    previous: SubscriptionRow
  ) => Effect.Effect<SubscriptionRow | undefined, SqlError>
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
      const columns = sql.literal("id, tenant_id, user_id, endpoint, p256dh, auth, created_at")
      const register = (registration: Registration) =>
        Effect.map(
          sql<SubscriptionRow>`
            INSERT INTO push_subscriptions (tenant_id, user_id, endpoint, p256dh, auth)
            VALUES (${registration.tenantId}, ${registration.userId}, ${registration.endpoint}, ${registration.p256dh},
                    ${registration.auth})
            ON CONFLICT (endpoint) DO UPDATE SET p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, updated_at = now()
            -- An endpoint never changes hands here: a row of another account is left alone, and none comes back.
            WHERE push_subscriptions.tenant_id = EXCLUDED.tenant_id AND push_subscriptions.user_id = EXCLUDED.user_id
            RETURNING ${columns}`,
          (rows) => rows[0]
        )
      return PushSubscriptionsRepo.of({
        register,
        findByEndpoint: (endpoint) =>
          Effect.map(
            sql<SubscriptionRow>`SELECT ${columns} FROM push_subscriptions WHERE endpoint = ${endpoint}`,
            (rows) => rows[0]
          ),
        takeOver: (registration, previous) =>
          Effect.gen(function*() {
            // Its deliveries lose their subscription (ON DELETE SET NULL): the worker finishes them as gone.
            const removed = yield* sql`
              DELETE FROM push_subscriptions
              WHERE id = ${previous.id} AND tenant_id = ${previous.tenant_id} AND user_id = ${previous.user_id}
                AND p256dh = ${previous.p256dh} AND auth = ${previous.auth}
              RETURNING id`
            return removed.length === 0 ? undefined : yield* register(registration)
          }).pipe(sql.withTransaction),
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
