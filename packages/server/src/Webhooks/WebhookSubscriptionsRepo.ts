/**
 * The SQL of webhook subscriptions (`webhook_subscriptions`). Every query
 * filters by the tenant of the caller's principal; the signing secret is
 * stored encrypted.
 */
import type { Webhooks } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface SubscriptionRow {
  readonly id: string
  readonly tenant_id: string
  readonly name: string
  readonly url: string
  readonly event_filter: Webhooks.EventFilter
  /** Encrypted. */
  readonly signing_secret: string | null
  readonly is_active: boolean
  /** Encrypted: the secret before the last rotation, valid until `previous_signing_secret_expires_at`. */
  readonly previous_signing_secret: string | null
  readonly previous_signing_secret_expires_at: Date | null
  readonly total_delivered: number
  readonly total_dead_letter: number
  readonly created_at: Date
}

export interface NewSubscription {
  readonly tenantId: string
  readonly name: string
  readonly url: string
  readonly eventFilter: Webhooks.EventFilter
  readonly signingSecret: string | null
  readonly createdBy: string | null
}

/** Columns to change; absent keys stay as they are. */
export interface SubscriptionChanges {
  readonly name?: string
  readonly url?: string
  readonly event_filter?: Webhooks.EventFilter
  readonly signing_secret?: string | null
  readonly previous_signing_secret?: null
  readonly previous_signing_secret_expires_at?: null
  readonly is_active?: boolean
}

export class WebhookSubscriptionsRepo extends Context.Service<WebhookSubscriptionsRepo, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<SubscriptionRow>, SqlError>
  readonly find: (tenantId: string, id: string) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  readonly insert: (subscription: NewSubscription) => Effect.Effect<SubscriptionRow, SqlError>
  readonly update: (
    tenantId: string,
    id: string,
    changes: SubscriptionChanges
  ) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, SqlError>
  /**
   * Makes `signingSecret` (encrypted) current and keeps the current one valid
   * until `previousExpiresAt`, in one statement.
   */
  readonly rotateSecret: (
    tenantId: string,
    id: string,
    signingSecret: string,
    previousExpiresAt: Date
  ) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  /** The secret before the last rotation, if it is still valid (delivery signing). */
  readonly previousSecret: (id: string) => Effect.Effect<string | undefined, SqlError>
}>()("@agent-platform/server/Webhooks/WebhookSubscriptionsRepo") {
  static readonly layer = Layer.effect(
    WebhookSubscriptionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql`id, tenant_id, name, url, event_filter, signing_secret, is_active, previous_signing_secret,
        previous_signing_secret_expires_at, total_delivered, total_dead_letter, created_at`

      const list = (tenantId: string) =>
        sql<
          SubscriptionRow
        >`SELECT ${columns} FROM webhook_subscriptions WHERE tenant_id = ${tenantId} ORDER BY created_at, id`

      const find = (tenantId: string, id: string) =>
        sql<SubscriptionRow>`SELECT ${columns} FROM webhook_subscriptions WHERE tenant_id = ${tenantId} AND id = ${id}`
          .pipe(
            Effect.map((rows) => rows[0])
          )

      const insert = (s: NewSubscription) =>
        sql<SubscriptionRow>`
          INSERT INTO webhook_subscriptions (tenant_id, name, url, event_filter, signing_secret, created_by)
          VALUES (${s.tenantId}, ${s.name}, ${s.url}, ${s.eventFilter}, ${s.signingSecret}, ${s.createdBy})
          RETURNING ${columns}`.pipe(Effect.map((rows) => rows[0]))

      const update = (tenantId: string, id: string, changes: SubscriptionChanges) =>
        sql<SubscriptionRow>`
          UPDATE webhook_subscriptions SET ${sql.update({ ...changes, updated_at: new Date() })}
          WHERE tenant_id = ${tenantId} AND id = ${id}
          RETURNING ${columns}`.pipe(Effect.map((rows) => rows[0]))

      const remove = (tenantId: string, id: string) =>
        sql<{ id: string }>`DELETE FROM webhook_subscriptions WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`
          .pipe(
            Effect.map((rows) => rows.length > 0)
          )

      // SET reads the row as it was: the old current secret becomes the previous one.
      const rotateSecret = (tenantId: string, id: string, signingSecret: string, previousExpiresAt: Date) =>
        sql<SubscriptionRow>`
          UPDATE webhook_subscriptions
          SET previous_signing_secret = signing_secret,
              previous_signing_secret_expires_at = CASE WHEN signing_secret IS NULL THEN NULL ELSE ${previousExpiresAt}::timestamptz END,
              signing_secret = ${signingSecret},
              updated_at = now()
          WHERE tenant_id = ${tenantId} AND id = ${id}
          RETURNING ${columns}`.pipe(Effect.map((rows) => rows[0]))

      const previousSecret = (id: string) =>
        sql<{ previous_signing_secret: string }>`
          SELECT previous_signing_secret FROM webhook_subscriptions
          WHERE id = ${id} AND previous_signing_secret IS NOT NULL AND previous_signing_secret_expires_at > now()`.pipe(
          Effect.map((rows) => rows[0]?.previous_signing_secret)
        )

      return WebhookSubscriptionsRepo.of({ list, find, insert, update, remove, rotateSecret, previousSecret })
    })
  )
}
