/**
 * The SQL of webhook subscriptions (`webhook_subscriptions`). Every query
 * filters by the tenant of the caller's principal; the signing secret is
 * stored encrypted.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Webhooks } from "@agent-platform/domain"

export interface SubscriptionRow {
  readonly id: string
  readonly tenant_id: string
  readonly name: string
  readonly url: string
  readonly event_filter: Webhooks.EventFilter
  /** Encrypted. */
  readonly signing_secret: string | null
  readonly is_active: boolean
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
  readonly is_active?: boolean
}

export class WebhookSubscriptionsRepo extends Context.Service<WebhookSubscriptionsRepo, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<SubscriptionRow>, SqlError>
  readonly find: (tenantId: string, id: string) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  readonly insert: (subscription: NewSubscription) => Effect.Effect<SubscriptionRow, SqlError>
  readonly update: (tenantId: string, id: string, changes: SubscriptionChanges) => Effect.Effect<SubscriptionRow | undefined, SqlError>
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/Webhooks/WebhookSubscriptionsRepo") {
  static readonly layer = Layer.effect(
    WebhookSubscriptionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql`id, tenant_id, name, url, event_filter, signing_secret, is_active, total_delivered, total_dead_letter, created_at`

      const list = (tenantId: string) =>
        sql<SubscriptionRow>`SELECT ${columns} FROM webhook_subscriptions WHERE tenant_id = ${tenantId} ORDER BY created_at, id`

      const find = (tenantId: string, id: string) =>
        sql<SubscriptionRow>`SELECT ${columns} FROM webhook_subscriptions WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
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
        sql<{ id: string }>`DELETE FROM webhook_subscriptions WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0)
        )

      return WebhookSubscriptionsRepo.of({ list, find, insert, update, remove })
    })
  )
}
