/**
 * The SQL of the compliance pack: provenance rows of `action_executions` in
 * (created_at, seq) order, read a page at a time by keyset (the index
 * `action_executions_provenance_idx`), and the executions of a period per
 * action and supervision class. Every query filters by the caller's tenant.
 *
 * Why keyset pages rather than one long-running query: a page is a short
 * indexed range scan, so an export never pins a connection (or a snapshot)
 * for as long as a slow client downloads, and it runs the same on the
 * embedded database, whose queries block the process while they run.
 */
import type { ActionAdmin, Compliance } from "@agent-platform/domain"
import { Context, Effect, Layer, Option, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** A provenance row as stored. */
export interface ProvenanceRecord {
  readonly id: string
  readonly seq: string
  /** `created_at` in microseconds since the epoch, as text: exact, for the cursor. */
  readonly at_us: string
  readonly created_at: Date
  readonly action_id: string
  readonly action_name: string
  readonly agent_id: string | null
  readonly chat_id: string | null
  readonly channel: Compliance.Channel
  readonly trigger_type: "key" | "user" | "agent"
  readonly trigger_id: string
  readonly trigger_name: string | null
  readonly on_behalf_type: "key" | "user" | null
  readonly on_behalf_id: string | null
  readonly on_behalf_name: string | null
  readonly confirmed_by_user_id: string | null
  readonly confirmed_by_key_id: string | null
  readonly confirmed_by_name: string | null
  readonly confirmation_text: string | null
  readonly confirmation_asked: string | null
  readonly confirmed_at: Date | null
  readonly hitl_version: number
  readonly hitl_mode: ActionAdmin.HitlMode
  readonly supervision: Compliance.Supervision
  readonly success: boolean
  readonly status_code: number
  readonly remote_called: boolean
}

/** Where a page starts: after this row. */
export interface Position {
  readonly atMicros: string
  readonly seq: string
}

export interface ProvenanceQuery {
  readonly tenantId: string
  readonly start: Date
  readonly end: Date
  readonly actionId?: string | undefined
  readonly supervision?: Compliance.Supervision | undefined
  readonly after?: Position | undefined
  readonly limit: number
}

export interface ActionExecutions {
  readonly action_id: string
  readonly action_name: string
  readonly is_active: boolean
  readonly hitl_mode: ActionAdmin.HitlMode
  readonly hitl_version: number
  readonly human_confirmed: number
  readonly human_triggered_auto: number
  readonly autonomous: number
  readonly shadow: number
  readonly unconfirmed: number
  readonly real_calls: number
}

export const positionOf = (row: ProvenanceRecord): Position => ({ atMicros: row.at_us, seq: row.seq })

export class ComplianceRepo extends Context.Service<ComplianceRepo, {
  readonly page: (query: ProvenanceQuery) => Effect.Effect<ReadonlyArray<ProvenanceRecord>, SqlError>
  /** Every row of the query, in pages of `query.limit`, as a stream of pages. */
  readonly pages: (query: Omit<ProvenanceQuery, "after">) => Stream.Stream<ReadonlyArray<ProvenanceRecord>, SqlError>
  /** Each action of the tenant with its current configuration and its executions in the period. */
  readonly executionsByAction: (
    tenantId: string,
    start: Date,
    end: Date
  ) => Effect.Effect<ReadonlyArray<ActionExecutions>, SqlError>
}>()("@agent-platform/server/Compliance/ComplianceRepo") {
  static readonly layer = Layer.effect(
    ComplianceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const page = (q: ProvenanceQuery) =>
        sql<ProvenanceRecord>`
          SELECT e.id, e.seq::text AS seq, (extract(epoch FROM e.created_at) * 1000000)::bigint::text AS at_us, e.created_at,
            e.action_id, e.action_name, e.agent_id, e.chat_id, e.channel,
            e.trigger_type, e.trigger_id, e.trigger_name, e.on_behalf_type, e.on_behalf_id, e.on_behalf_name,
            e.confirmed_by_user_id, e.confirmed_by_key_id, e.confirmed_by_name, e.confirmation_text, e.confirmation_asked,
            e.confirmed_at, e.hitl_version, e.hitl_mode, e.supervision, e.success, e.status_code, e.remote_called
          FROM action_executions e
          WHERE e.tenant_id = ${q.tenantId} AND e.created_at >= ${q.start} AND e.created_at < ${q.end}
            ${q.actionId === undefined ? sql`` : sql`AND e.action_id = ${q.actionId}`}
            ${q.supervision === undefined ? sql`` : sql`AND e.supervision = ${q.supervision}`}
            ${
          q.after === undefined
            ? sql``
            : sql`AND (e.created_at, e.seq) > (to_timestamp(0) + ${q.after.atMicros}::bigint * interval '1 microsecond', ${q.after.seq}::bigint)`
        }
          ORDER BY e.created_at, e.seq
          LIMIT ${q.limit}`

      const pages = (q: Omit<ProvenanceQuery, "after">) =>
        Stream.paginate(undefined as Position | undefined, (after) =>
          Effect.map(page({ ...q, after }), (rows) =>
            [
              rows.length === 0 ? [] : [rows],
              rows.length < q.limit ? Option.none() : Option.some(positionOf(rows[rows.length - 1]))
            ] as const))

      const executionsByAction = (tenantId: string, start: Date, end: Date) =>
        sql<ActionExecutions>`
          SELECT a.id AS action_id, a.name AS action_name, a.is_active, a.hitl_mode, a.hitl_version,
            coalesce(sum((e.supervision = 'human_confirmed')::int), 0)::int AS human_confirmed,
            coalesce(sum((e.supervision = 'human_triggered_auto')::int), 0)::int AS human_triggered_auto,
            coalesce(sum((e.supervision = 'autonomous')::int), 0)::int AS autonomous,
            coalesce(sum((e.supervision = 'shadow')::int), 0)::int AS shadow,
            coalesce(sum((e.supervision NOT IN ('human_confirmed', 'shadow'))::int), 0)::int AS unconfirmed,
            coalesce(sum(e.remote_called::int), 0)::int AS real_calls
          FROM actions a
          LEFT JOIN action_executions e ON e.action_id = a.id AND e.tenant_id = a.tenant_id
            AND e.created_at >= ${start} AND e.created_at < ${end}
          WHERE a.tenant_id = ${tenantId}
          GROUP BY a.id
          ORDER BY a.name, a.id`

      return ComplianceRepo.of({ page, pages, executionsByAction })
    })
  )
}
