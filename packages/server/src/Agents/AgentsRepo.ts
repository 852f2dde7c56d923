/**
 * The SQL of the agent catalog: agents (grouped into spaces), the actions
 * assigned to them (`agent_actions`) and, for an agent's detail, its active
 * actions and knowledge files. Every query filters by the tenant of the
 * caller's principal; changes run in the caller's transaction when there is one.
 */
import { Knowledge } from "@agent-platform/domain"
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as SqlSchema from "effect/sql/SqlSchema"

/** An agent with its space and the ids of every action assigned to it (active or not). */
export const AgentRow = Schema.Struct({
  id: Schema.String,
  space_id: Schema.String,
  space_code: Schema.String,
  name: Schema.String,
  summary: Schema.String,
  instructions: Schema.NullOr(Schema.String),
  is_primary: Schema.Boolean,
  always_on: Schema.Boolean,
  action_ids: Schema.Array(Schema.String),
  created_at: Schema.Date
})
export type AgentRow = typeof AgentRow.Type

const ActionSummaryRow = Schema.Struct({ id: Schema.String, name: Schema.String, description: Schema.String })

const KnowledgeFileSummaryRow = Schema.Struct({
  id: Schema.String,
  filename: Schema.String,
  content_summary: Schema.String,
  status: Knowledge.KnowledgeFileStatus
})

/** Which agents a query may see: the whole tenant, or some of its spaces. */
export interface AgentFilter {
  readonly tenantId: string
  /** A space id or code (the key interface's `?space=`). */
  readonly space?: string | undefined
  /** Only these spaces (a Space Admin's); `undefined` for every space. */
  readonly spaceIds?: ReadonlyArray<string> | undefined
}

/** The columns an update may change; absent keys stay as they are. */
export interface AgentChanges {
  readonly name?: string
  readonly summary?: string
  readonly instructions?: string | null
  readonly is_primary?: boolean
  readonly always_on?: boolean
}

export interface NewAgent {
  readonly tenantId: string
  readonly spaceId: string
  readonly name: string
  readonly summary: string
  readonly instructions: string | null
  readonly isPrimary: boolean
  readonly alwaysOn: boolean
}

const TenantAndId = Schema.Struct({ tenantId: Schema.String, id: Schema.String })

export class AgentsRepo extends Context.Service<AgentsRepo, {
  readonly list: (filter: AgentFilter) => Effect.Effect<ReadonlyArray<AgentRow>, SqlError | Schema.SchemaError>
  readonly find: (tenantId: string, id: string) => Effect.Effect<AgentRow | undefined, SqlError | Schema.SchemaError>
  /** The agent's active actions, by name. */
  readonly activeActions: (tenantId: string, agentId: string) => Effect.Effect<
    ReadonlyArray<typeof ActionSummaryRow.Type>,
    SqlError | Schema.SchemaError
  >
  /** The agent's knowledge files, oldest first. */
  readonly knowledgeFiles: (tenantId: string, agentId: string) => Effect.Effect<
    ReadonlyArray<typeof KnowledgeFileSummaryRow.Type>,
    SqlError | Schema.SchemaError
  >
  /**
   * Locks the tenant's space for the rest of the transaction, so that two
   * changes of its primary agent cannot interleave; false when it is not the
   * tenant's space.
   */
  readonly lockSpace: (tenantId: string, spaceId: string) => Effect.Effect<boolean, SqlError>
  /** Whether the tenant has the space (an id of another tenant's is no space of this one). */
  readonly spaceExists: (tenantId: string, spaceId: string) => Effect.Effect<boolean, SqlError>
  /** Unsets the space's primary agent, except `keep`. */
  readonly unsetPrimary: (tenantId: string, spaceId: string, keep: string | null) => Effect.Effect<void, SqlError>
  readonly insert: (agent: NewAgent) => Effect.Effect<string, SqlError>
  readonly update: (tenantId: string, id: string, changes: AgentChanges) => Effect.Effect<void, SqlError>
  /** Deletes the agent; its assignments, knowledge files and chunks go with it (foreign keys cascade). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, SqlError>
  /** The ids among `ids` that are actions of the tenant (active or not). */
  readonly knownActionIds: (
    tenantId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<string>, SqlError>
  /** Replaces the agent's action set (inside the caller's transaction; concurrent replacements serialize). */
  readonly replaceActions: (agentId: string, actionIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Agents/AgentsRepo") {
  static readonly layer = Layer.effect(
    AgentsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const select = sql`
        SELECT a.id, a.space_id, s.code AS space_code, a.name, a.summary, a.instructions, a.is_primary, a.always_on,
          COALESCE((SELECT jsonb_agg(aa.action_id::text ORDER BY aa.action_id) FROM agent_actions aa WHERE aa.agent_id = a.id),
            '[]'::jsonb) AS action_ids,
          a.created_at
        FROM agents a JOIN spaces s ON s.id = a.space_id`

      const listRows = SqlSchema.findAll({
        Request: Schema.Struct({
          tenantId: Schema.String,
          space: Schema.optional(Schema.String),
          spaceIds: Schema.optional(Schema.Array(Schema.String))
        }),
        Result: AgentRow,
        execute: ({ space, spaceIds, tenantId }) =>
          sql`${select}
            WHERE ${
            sql.and([
              sql`a.tenant_id = ${tenantId}`,
              // By text, so that a code (or anything else) never reaches a uuid cast.
              ...(space === undefined ? [] : [sql`(s.id::text = ${space} OR s.code = ${space})`]),
              ...(spaceIds === undefined
                ? []
                : [spaceIds.length === 0 ? sql`false` : sql`a.space_id IN ${sql.in(spaceIds)}`])
            ])
          }
            ORDER BY s.code, a.is_primary DESC, a.name, a.id`
      })

      const findRow = SqlSchema.findOneOption({
        Request: TenantAndId,
        Result: AgentRow,
        execute: ({ id, tenantId }) => sql`${select} WHERE a.tenant_id = ${tenantId} AND a.id = ${id}`
      })

      const activeActions = SqlSchema.findAll({
        Request: TenantAndId,
        Result: ActionSummaryRow,
        execute: ({ id, tenantId }) =>
          sql`
            SELECT ac.id, ac.name, ac.description
            FROM agent_actions aa JOIN actions ac ON ac.id = aa.action_id
            WHERE aa.agent_id = ${id} AND ac.tenant_id = ${tenantId} AND ac.is_active
            ORDER BY ac.name, ac.id`
      })

      const knowledgeFiles = SqlSchema.findAll({
        Request: TenantAndId,
        Result: KnowledgeFileSummaryRow,
        execute: ({ id, tenantId }) =>
          sql`
            SELECT id, filename, content_summary, status FROM knowledge_files
            WHERE tenant_id = ${tenantId} AND agent_id = ${id}
            ORDER BY uploaded_at, id`
      })

      return AgentsRepo.of({
        list: (filter) => listRows(filter),
        find: (tenantId, id) => Effect.map(findRow({ tenantId, id }), Option.getOrUndefined),
        activeActions: (tenantId, agentId) => activeActions({ tenantId, id: agentId }),
        knowledgeFiles: (tenantId, agentId) => knowledgeFiles({ tenantId, id: agentId }),
        lockSpace: (tenantId, spaceId) =>
          Effect.map(
            sql`SELECT id FROM spaces WHERE tenant_id = ${tenantId} AND id = ${spaceId} FOR UPDATE`,
            (rows) => rows.length > 0
          ),
        spaceExists: (tenantId, spaceId) =>
          Effect.map(
            sql`SELECT 1 FROM spaces WHERE tenant_id = ${tenantId} AND id = ${spaceId}`,
            (rows) => rows.length > 0
          ),
        unsetPrimary: (tenantId, spaceId, keep) =>
          sql`
            UPDATE agents SET is_primary = false, updated_at = now()
            WHERE ${
            sql.and([
              sql`tenant_id = ${tenantId}`,
              sql`space_id = ${spaceId}`,
              "is_primary",
              ...(keep === null ? [] : [sql`id <> ${keep}`])
            ])
          }`.pipe(Effect.asVoid),
        insert: (agent) =>
          Effect.map(
            sql<{ id: string }>`
              INSERT INTO agents (tenant_id, space_id, name, summary, instructions, is_primary, always_on)
              VALUES (${agent.tenantId}, ${agent.spaceId}, ${agent.name}, ${agent.summary}, ${agent.instructions},
                      ${agent.isPrimary}, ${agent.alwaysOn})
              RETURNING id`,
            (rows) => rows[0].id
          ),
        update: (tenantId, id, changes) =>
          sql`
            UPDATE agents SET ${sql.update({ ...changes, updated_at: new Date() })}
            WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(Effect.asVoid),
        remove: (tenantId, id) =>
          Effect.map(
            sql`DELETE FROM agents WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`,
            (rows) => rows.length > 0
          ),
        knownActionIds: (tenantId, ids) =>
          ids.length === 0
            ? Effect.succeed([])
            : Effect.map(
              sql<{ id: string }>`SELECT id FROM actions WHERE tenant_id = ${tenantId} AND id IN ${sql.in(ids)}`,
              (rows) => rows.map((row) => row.id)
            ),
        replaceActions: (agentId, actionIds) =>
          Effect.gen(function*() {
            // Replacements of one agent's set queue behind its row lock: the DELETE of the next one then sees what
            // the previous one inserted, so concurrent identical PUTs neither collide on the primary key nor merge.
            yield* sql`SELECT id FROM agents WHERE id = ${agentId} FOR UPDATE`
            yield* sql`DELETE FROM agent_actions WHERE agent_id = ${agentId}`
            if (Arr.isReadonlyArrayNonEmpty(actionIds)) {
              const rows = Arr.map(
                actionIds,
                (actionId): Record<string, unknown> => ({ agent_id: agentId, action_id: actionId })
              )
              yield* sql`INSERT INTO agent_actions ${sql.insert(rows)} ON CONFLICT DO NOTHING`
            }
          })
      })
    })
  )
}
