/**
 * The SQL of the exports: chat messages a page at a time (keyset on
 * created_at and id), per-day activity of each space, the figures of the ROI
 * report, and the tenant's ROI settings. Every query filters by the caller's
 * tenant.
 */
import type { Exports } from "@agent-platform/domain"
import { Context, Effect, Layer, Option, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { selectSpaceByRef } from "../Tenants/SpaceRefs.ts"

export interface MessageExportRow {
  readonly id: string
  readonly at_us: string
  readonly created_at: Date
  readonly chat_id: string
  readonly space_code: string
  readonly agent_name: string | null
  readonly role: "user" | "agent"
  readonly author: string | null
  readonly content: string
}

export interface DayMetricsRow {
  readonly space_id: string | null
  readonly space_code: string | null
  readonly chats: number
  readonly messages: number
  readonly tokens_input: number
  readonly tokens_output: number
  readonly actions_succeeded: number
  readonly actions_failed: number
}

export interface RoiFigures {
  readonly messagesAnswered: number
  readonly tokens: number
  readonly actions: ReadonlyArray<{ readonly supervision: string; readonly succeeded: number; readonly failed: number }>
  readonly weeks: ReadonlyArray<{ readonly week: string; readonly messages: number; readonly actions: number }>
  readonly topAgents: ReadonlyArray<{ readonly name: string; readonly messages: number }>
  readonly topActions: ReadonlyArray<{ readonly name: string; readonly executions: number; readonly succeeded: number }>
}

export class ExportsRepo extends Context.Service<ExportsRepo, {
  /** The id of the tenant's space named by `ref`, its id or its code; undefined when there is none. */
  readonly spaceIdOf: (tenantId: string, ref: string) => Effect.Effect<string | undefined, SqlError>
  readonly tenantName: (tenantId: string) => Effect.Effect<string, SqlError>
  /** The period's messages, oldest first, in pages of `batchSize`. */
  readonly messagePages: (query: {
    readonly tenantId: string
    readonly start: Date
    readonly end: Date
    readonly spaceId?: string | undefined
    readonly batchSize: number
  }) => Stream.Stream<ReadonlyArray<MessageExportRow>, SqlError>
  /** One UTC day's activity per space (executions outside a space under a null space). */
  readonly dayMetrics: (
    tenantId: string,
    start: Date,
    end: Date
  ) => Effect.Effect<ReadonlyArray<DayMetricsRow>, SqlError>
  readonly roiFigures: (tenantId: string, start: Date, end: Date) => Effect.Effect<RoiFigures, SqlError>
  readonly roiSettings: (tenantId: string) => Effect.Effect<Exports.RoiSettings, SqlError>
  /**
   * The settings, row-locked until the transaction ends (the defaults stored
   * first when there are none): two partial updates at once merge one after
   * the other instead of one losing the other's field.
   */
  readonly roiSettingsForUpdate: (tenantId: string) => Effect.Effect<Exports.RoiSettings, SqlError>
  readonly saveRoiSettings: (
    tenantId: string,
    settings: Exports.RoiSettings
  ) => Effect.Effect<Exports.RoiSettings, SqlError>
}>()("@agent-platform/server/Exports/ExportsRepo") {
  static readonly layer = Layer.effect(
    ExportsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const messagePage = (
        q: {
          readonly tenantId: string
          readonly start: Date
          readonly end: Date
          readonly spaceId?: string | undefined
          readonly batchSize: number
        },
        after: { readonly atUs: string; readonly id: string } | undefined
      ) =>
        sql<MessageExportRow>`
          SELECT m.id, (extract(epoch FROM m.created_at) * 1000000)::bigint::text AS at_us, m.created_at, m.chat_id,
            s.code AS space_code, coalesce(ma.name, ca.name) AS agent_name, m.role,
            CASE WHEN m.role = 'agent' THEN ma.name WHEN u.id IS NOT NULL THEN u.nombre
                 WHEN k.id IS NOT NULL THEN 'API key ' || k.name END AS author,
            m.content
          FROM chat_messages m
          JOIN chats c ON c.id = m.chat_id
          JOIN spaces s ON s.id = c.space_id
          LEFT JOIN agents ma ON ma.id = m.agent_id
          LEFT JOIN agents ca ON ca.id = c.agent_id
          LEFT JOIN users u ON u.id = coalesce(m.user_id, c.user_id)
          LEFT JOIN api_keys k ON k.id = c.key_id
          WHERE m.tenant_id = ${q.tenantId} AND m.created_at >= ${q.start} AND m.created_at < ${q.end}
            ${q.spaceId === undefined ? sql`` : sql`AND c.space_id = ${q.spaceId}`}
            ${
          after === undefined
            ? sql``
            : sql`AND (m.created_at, m.id) > (to_timestamp(0) + ${after.atUs}::bigint * interval '1 microsecond', ${after.id}::uuid)`
        }
          ORDER BY m.created_at, m.id
          LIMIT ${q.batchSize}`

      const counts = sql.literal(`
        sum(chats)::int AS chats, sum(messages)::int AS messages,
        sum(tokens_input)::float8 AS tokens_input, sum(tokens_output)::float8 AS tokens_output,
        sum(succeeded)::int AS actions_succeeded, sum(failed)::int AS actions_failed`)

      const defaults: Exports.RoiSettings = {
        minutes_saved_per_message: 2,
        minutes_saved_per_action: 5,
        token_cost_per_1k: null
      }

      return ExportsRepo.of({
        spaceIdOf: (tenantId, ref) => Effect.map(selectSpaceByRef(sql, tenantId, ref), (rows) => rows[0]?.id),
        tenantName: (tenantId) =>
          Effect.map(
            sql<{ name: string }>`SELECT name FROM tenants WHERE id = ${tenantId}`,
            (rows) => rows[0]?.name ?? ""
          ),
        messagePages: (q) =>
          Stream.paginate(
            undefined as { readonly atUs: string; readonly id: string } | undefined,
            (after) =>
              Effect.map(messagePage(q, after), (rows) => {
                const last = rows.at(-1)
                return [
                  rows.length === 0 ? [] : [rows],
                  rows.length < q.batchSize || last === undefined
                    ? Option.none()
                    : Option.some({ atUs: last.at_us, id: last.id })
                ] as const
              })
          ),
        dayMetrics: (tenantId, start, end) =>
          sql<DayMetricsRow>`
            SELECT a.space_id, s.code AS space_code, ${counts}
            FROM (
              SELECT c.space_id, count(DISTINCT m.chat_id) AS chats, count(*) AS messages,
                sum(m.tokens_input) AS tokens_input, sum(m.tokens_output) AS tokens_output, 0 AS succeeded, 0 AS failed
              FROM chat_messages m JOIN chats c ON c.id = m.chat_id
              WHERE m.tenant_id = ${tenantId} AND m.created_at >= ${start} AND m.created_at < ${end}
              GROUP BY c.space_id
              UNION ALL
              SELECT e.space_id, 0, 0, 0, 0, sum(e.success::int), sum((NOT e.success)::int)
              FROM action_executions e
              WHERE e.tenant_id = ${tenantId} AND e.created_at >= ${start} AND e.created_at < ${end}
              GROUP BY e.space_id
            ) a LEFT JOIN spaces s ON s.id = a.space_id
            GROUP BY a.space_id, s.code
            ORDER BY s.code NULLS LAST`,
        roiFigures: (tenantId, start, end) =>
          Effect.gen(function*() {
            const [messages] = yield* sql<{ answered: number; tokens: number }>`
              SELECT count(*) FILTER (WHERE role = 'agent')::int AS answered, coalesce(sum(tokens_input + tokens_output), 0)::float8 AS tokens
              FROM chat_messages WHERE tenant_id = ${tenantId} AND created_at >= ${start} AND created_at < ${end}`
            const actions = yield* sql<{ supervision: string; succeeded: number; failed: number }>`
              SELECT supervision, sum(success::int)::int AS succeeded, sum((NOT success)::int)::int AS failed
              FROM action_executions WHERE tenant_id = ${tenantId} AND created_at >= ${start} AND created_at < ${end}
              GROUP BY supervision`
            const weeks = yield* sql<{ week: string; messages: number; actions: number }>`
              SELECT week::date::text AS week, sum(messages)::int AS messages, sum(actions)::int AS actions FROM (
                SELECT date_trunc('week', created_at AT TIME ZONE 'UTC') AS week, 1 AS messages, 0 AS actions
                FROM chat_messages WHERE tenant_id = ${tenantId} AND role = 'agent' AND created_at >= ${start} AND created_at < ${end}
                UNION ALL
                SELECT date_trunc('week', created_at AT TIME ZONE 'UTC'), 0, 1
                FROM action_executions WHERE tenant_id = ${tenantId} AND created_at >= ${start} AND created_at < ${end}
              ) w GROUP BY week ORDER BY week`
            const topAgents = yield* sql<{ name: string; messages: number }>`
              SELECT a.name, count(*)::int AS messages
              FROM chat_messages m JOIN agents a ON a.id = m.agent_id
              WHERE m.tenant_id = ${tenantId} AND m.role = 'agent' AND m.created_at >= ${start} AND m.created_at < ${end}
              GROUP BY a.id, a.name ORDER BY messages DESC, a.name LIMIT 5`
            const topActions = yield* sql<{ name: string; executions: number; succeeded: number }>`
              SELECT action_name AS name, count(*)::int AS executions, sum(success::int)::int AS succeeded
              FROM action_executions WHERE tenant_id = ${tenantId} AND created_at >= ${start} AND created_at < ${end}
              GROUP BY action_id, action_name ORDER BY executions DESC, action_name LIMIT 5`
            return {
              messagesAnswered: messages.answered,
              tokens: messages.tokens,
              actions,
              weeks,
              topAgents,
              topActions
            }
          }),
        roiSettings: (tenantId) =>
          Effect.map(
            sql<Exports.RoiSettings>`
              SELECT minutes_saved_per_message, minutes_saved_per_action, token_cost_per_1k
              FROM tenant_roi_settings WHERE tenant_id = ${tenantId}`,
            (rows) => rows[0] ?? defaults
          ),
        roiSettingsForUpdate: (tenantId) =>
          Effect.andThen(
            sql`
              INSERT INTO tenant_roi_settings (tenant_id, minutes_saved_per_message, minutes_saved_per_action, token_cost_per_1k)
              VALUES (${tenantId}, ${defaults.minutes_saved_per_message}, ${defaults.minutes_saved_per_action}, ${defaults.token_cost_per_1k})
              ON CONFLICT (tenant_id) DO NOTHING`,
            Effect.map(
              sql<Exports.RoiSettings>`
                SELECT minutes_saved_per_message, minutes_saved_per_action, token_cost_per_1k
                FROM tenant_roi_settings WHERE tenant_id = ${tenantId} FOR UPDATE`,
              (rows) => rows[0] ?? defaults
            )
          ),
        saveRoiSettings: (tenantId, s) =>
          Effect.map(
            sql<Exports.RoiSettings>`
              INSERT INTO tenant_roi_settings (tenant_id, minutes_saved_per_message, minutes_saved_per_action, token_cost_per_1k)
              VALUES (${tenantId}, ${s.minutes_saved_per_message}, ${s.minutes_saved_per_action}, ${s.token_cost_per_1k})
              ON CONFLICT (tenant_id) DO UPDATE SET
                minutes_saved_per_message = EXCLUDED.minutes_saved_per_message,
                minutes_saved_per_action = EXCLUDED.minutes_saved_per_action,
                token_cost_per_1k = EXCLUDED.token_cost_per_1k, updated_at = now()
              RETURNING minutes_saved_per_message, minutes_saved_per_action, token_cost_per_1k`,
            (rows) => rows[0]
          )
      })
    })
  )
}
