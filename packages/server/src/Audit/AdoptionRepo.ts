/**
 * The SQL of adoption: per UTC day and space, who was active, the messages
 * people sent and the actions run. A user is active when they sent a chat
 * message (in a chat of theirs) or triggered, or confirmed, an execution.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface ActivityCounts {
  readonly active_users: number
  readonly messages: number
  readonly actions: number
}

export class AdoptionRepo extends Context.Service<AdoptionRepo, {
  /** Per day with activity, per space with activity, and the period's totals (distinct users over the period). */
  readonly activity: (tenantId: string, start: Date, end: Date) => Effect.Effect<{
    readonly daily: ReadonlyArray<ActivityCounts & { readonly date: string }>
    readonly bySpace: ReadonlyArray<ActivityCounts & { readonly space_id: string; readonly space_code: string }>
    readonly totals: ActivityCounts
  }, SqlError>
}>()("@agent-platform/server/Audit/AdoptionRepo") {
  static readonly layer = Layer.effect(
    AdoptionRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const activity = (tenantId: string, start: Date, end: Date) =>
        Effect.gen(function*() {
          // One row per message (its author: a room message names its own, a chat's is the chat's user),
          // per execution, and per user an execution names; grouped three ways below.
          const rows = sql`
            SELECT (m.created_at AT TIME ZONE 'UTC')::date AS day, c.space_id, coalesce(m.user_id, c.user_id)::text AS user_id, 1 AS messages, 0 AS actions
            FROM chat_messages m JOIN chats c ON c.id = m.chat_id
            WHERE m.tenant_id = ${tenantId} AND m.role = 'user' AND m.created_at >= ${start} AND m.created_at < ${end}
            UNION ALL
            SELECT (e.created_at AT TIME ZONE 'UTC')::date, e.space_id, NULL, 0, 1
            FROM action_executions e
            WHERE e.tenant_id = ${tenantId} AND e.created_at >= ${start} AND e.created_at < ${end}
            UNION ALL
            SELECT (e.created_at AT TIME ZONE 'UTC')::date, e.space_id, u.user_id, 0, 0
            FROM action_executions e CROSS JOIN LATERAL (VALUES
              (CASE WHEN e.trigger_type = 'user' THEN e.trigger_id END),
              (CASE WHEN e.on_behalf_type = 'user' THEN e.on_behalf_id END),
              (e.confirmed_by_user_id::text)
            ) AS u (user_id)
            WHERE e.tenant_id = ${tenantId} AND e.created_at >= ${start} AND e.created_at < ${end} AND u.user_id IS NOT NULL`
          const counts = sql.literal(
            "count(DISTINCT user_id)::int AS active_users, coalesce(sum(messages), 0)::int AS messages, coalesce(sum(actions), 0)::int AS actions"
          )
          const daily = yield* sql<ActivityCounts & { date: string }>`
            SELECT day::text AS date, ${counts} FROM (${rows}) a GROUP BY day ORDER BY day`
          const bySpace = yield* sql<ActivityCounts & { space_id: string; space_code: string }>`
            SELECT s.id AS space_id, s.code AS space_code, ${counts}
            FROM (${rows}) a JOIN spaces s ON s.id = a.space_id AND s.tenant_id = ${tenantId}
            GROUP BY s.id, s.code ORDER BY s.code`
          const [totals] = yield* sql<ActivityCounts>`SELECT ${counts} FROM (${rows}) a`
          return { daily, bySpace, totals }
        })
      return AdoptionRepo.of({ activity })
    })
  )
}
