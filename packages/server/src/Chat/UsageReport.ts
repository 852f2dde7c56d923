/**
 * Usage of a tenant over the last 24 hours, 7 days or 30 days (spec: GET
 * /v1/usage): chat messages (user and agent), the tokens the models consumed
 * (stored with each agent message: the provider's usage fields or the
 * embedded model's own count), and successful action executions
 * (`action_executions`), in total and per space. An execution counts toward a
 * space through its chat, or, run directly (or over MCP) with a space-bound
 * key, toward the key's space; direct executions with an unbound key count in
 * the total only. A space-bound key (Access/SpaceBinding.ts) sees its space
 * only: the totals are that space's row.
 */
import type { Usage } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

const periodMillis: Record<Usage.UsagePeriod, number> = {
  "24h": 24 * 60 * 60 * 1000,
  "7d": 7 * 24 * 60 * 60 * 1000,
  "30d": 30 * 24 * 60 * 60 * 1000
}

interface SpaceCounts {
  readonly space_id: string
  readonly space_code: string
  readonly messages: number
  readonly tokens_input: number
  readonly tokens_output: number
  readonly executions: number
}

const counts = (row: { messages: number; tokens_input: number; tokens_output: number; executions: number }) => ({
  messages: row.messages,
  tokens: { input: row.tokens_input, output: row.tokens_output, total: row.tokens_input + row.tokens_output },
  successful_action_executions: row.executions
})

export class UsageReport extends Context.Service<UsageReport, {
  /** The tenant's usage over the period ending now; that of one space when `spaceId` is set. */
  readonly report: (input: {
    readonly tenantId: string
    readonly spaceId?: string | null | undefined
    readonly period: Usage.UsagePeriod
  }) => Effect.Effect<Usage.Usage, SqlError>
}>()("@agent-platform/server/Chat/UsageReport") {
  static readonly layer = Layer.effect(
    UsageReport,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const report = Effect.fn("UsageReport.report")(function*(input: {
        readonly tenantId: string
        readonly spaceId?: string | null | undefined
        readonly period: Usage.UsagePeriod
      }) {
        const to = new Date()
        const from = new Date(to.getTime() - periodMillis[input.period])
        // No upper bound in the queries: `to` has millisecond precision, the database's timestamps microseconds.
        const spaces = yield* sql<SpaceCounts>`
          WITH messages AS (
            SELECT c.space_id, count(*)::int AS messages,
                   coalesce(sum(m.tokens_input), 0)::int AS tokens_input,
                   coalesce(sum(m.tokens_output), 0)::int AS tokens_output
            FROM chat_messages m JOIN chats c ON c.id = m.chat_id
            WHERE m.tenant_id = ${input.tenantId} AND m.created_at >= ${from}
            GROUP BY c.space_id
          ), executions AS (
            SELECT space_id, count(*)::int AS executions FROM (
              SELECT c.space_id
              FROM action_executions e JOIN chats c ON c.id::text = e.chat_id AND c.tenant_id = e.tenant_id
              WHERE e.tenant_id = ${input.tenantId} AND e.success AND e.created_at >= ${from}
              UNION ALL
              SELECT k.space_id
              FROM action_executions e JOIN api_keys k ON k.id::text = e.caller_id
              WHERE e.tenant_id = ${input.tenantId} AND e.success AND e.created_at >= ${from}
                AND e.caller_kind = 'key' AND e.chat_id IS NULL AND k.space_id IS NOT NULL
            ) attributed
            GROUP BY space_id
          )
          SELECT s.id AS space_id, s.code AS space_code,
                 coalesce(m.messages, 0) AS messages, coalesce(m.tokens_input, 0) AS tokens_input,
                 coalesce(m.tokens_output, 0) AS tokens_output, coalesce(e.executions, 0) AS executions
          FROM spaces s
          LEFT JOIN messages m ON m.space_id = s.id
          LEFT JOIN executions e ON e.space_id = s.id
          WHERE s.tenant_id = ${input.tenantId} AND ${input.spaceId == null ? sql`true` : sql`s.id = ${input.spaceId}`}
          ORDER BY s.created_at, s.id`
        // The tenant's total also counts what no space owns (direct calls with unbound keys or a session).
        const executions = input.spaceId == null
          ? (yield* sql<{ n: number }>`
              SELECT count(*)::int AS n FROM action_executions
              WHERE tenant_id = ${input.tenantId} AND success AND created_at >= ${from}`)[0].n
          : spaces.reduce((sum, space) => sum + space.executions, 0)
        const total = spaces.reduce(
          (sum, space) => ({
            messages: sum.messages + space.messages,
            tokens_input: sum.tokens_input + space.tokens_input,
            tokens_output: sum.tokens_output + space.tokens_output,
            executions
          }),
          { messages: 0, tokens_input: 0, tokens_output: 0, executions }
        )
        return {
          period: input.period,
          from: from.toISOString(),
          to: to.toISOString(),
          ...counts(total),
          by_space: spaces.map((space) => ({
            space_id: space.space_id,
            space_code: space.space_code,
            ...counts(space)
          }))
        } satisfies Usage.Usage
      })

      return UsageReport.of({ report })
    })
  )
}
