/**
 * The SQL of the action catalog (`actions`): the active entries callers see,
 * every entry for administrators, and their changes. Actions are never
 * deleted here (executions keep pointing at them): deactivation sets
 * `is_active` false. Every query filters by the tenant of the caller's principal.
 */
import { ActionAdmin, Actions } from "@agent-platform/domain"
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as SqlSchema from "effect/sql/SqlSchema"

/** The columns an administrator writes. */
export const ActionFields = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  http_method: Actions.HttpMethodName,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  parameters: Schema.Array(Actions.ActionParameter),
  is_active: Schema.Boolean,
  hitl_mode: ActionAdmin.HitlMode
})
export type ActionFields = typeof ActionFields.Type

/** A catalog entry as stored; `hitl_version` counts the changes of `hitl_mode`. */
export const ActionRow = Schema.Struct({
  id: Schema.String,
  ...ActionFields.fields,
  hitl_version: Schema.Int,
  created_at: Schema.Date
})
export type ActionRow = typeof ActionRow.Type

const columns =
  "id, name, description, http_method, url, headers, parameters, is_active, hitl_mode, hitl_version, created_at"

export class ActionCatalogRepo extends Context.Service<ActionCatalogRepo, {
  /**
   * The tenant's active actions, by name; with a space, only those assigned
   * to some agent of that space.
   */
  readonly listActive: (
    tenantId: string,
    spaceId: string | null
  ) => Effect.Effect<ReadonlyArray<ActionRow>, SqlError | Schema.SchemaError>
  /** Every action of the tenant, active or not, by name. */
  readonly listAll: (tenantId: string) => Effect.Effect<ReadonlyArray<ActionRow>, SqlError | Schema.SchemaError>
  /** One action; `forUpdate` locks its row for the rest of the transaction. */
  readonly find: (tenantId: string, id: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<
    ActionRow | undefined,
    SqlError | Schema.SchemaError
  >
  readonly insert: (tenantId: string, fields: ActionFields) => Effect.Effect<ActionRow, SqlError | Schema.SchemaError>
  /** Writes the fields; a changed `hitl_mode` takes the next `hitl_version` and stores its snapshot. */
  readonly update: (
    tenantId: string,
    id: string,
    fields: ActionFields,
    changedBy: string
  ) => Effect.Effect<ActionRow | undefined, SqlError | Schema.SchemaError>
  /** Stores the snapshot of a row's current configuration (its first, at creation). */
  readonly insertHitlVersion: (tenantId: string, row: ActionRow, changedBy: string) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Actions/ActionCatalogRepo") {
  static readonly layer = Layer.effect(
    ActionCatalogRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const selected = sql.literal(columns)

      const listActive = SqlSchema.findAll({
        Request: Schema.Struct({ tenantId: Schema.String, spaceId: Schema.NullOr(Schema.String) }),
        Result: ActionRow,
        execute: ({ spaceId, tenantId }) =>
          sql`
            SELECT ${selected} FROM actions a
            WHERE a.tenant_id = ${tenantId} AND a.is_active
              AND (${spaceId}::uuid IS NULL OR EXISTS (
                SELECT 1 FROM agent_actions aa JOIN agents ag ON ag.id = aa.agent_id
                WHERE aa.action_id = a.id AND ag.space_id = ${spaceId}::uuid AND ag.tenant_id = a.tenant_id
              ))
            ORDER BY a.name, a.id`
      })

      const listAll = SqlSchema.findAll({
        Request: Schema.String,
        Result: ActionRow,
        execute: (tenantId) => sql`SELECT ${selected} FROM actions WHERE tenant_id = ${tenantId} ORDER BY name, id`
      })

      const findRow = SqlSchema.findOneOption({
        Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String, forUpdate: Schema.Boolean }),
        Result: ActionRow,
        execute: ({ forUpdate, id, tenantId }) =>
          sql`SELECT ${selected} FROM actions WHERE tenant_id = ${tenantId} AND id = ${id} ${
            sql.literal(forUpdate ? "FOR UPDATE" : "")
          }`
      })

      const insertRow = SqlSchema.findOne({
        Request: Schema.Struct({ tenantId: Schema.String, fields: ActionFields }),
        Result: ActionRow,
        execute: ({ fields: f, tenantId }) =>
          sql`
            INSERT INTO actions (tenant_id, name, description, http_method, url, headers, parameters, is_active, hitl_mode)
            VALUES (${tenantId}, ${f.name}, ${f.description}, ${f.http_method}, ${f.url}, ${
            JSON.stringify(f.headers)
          }::jsonb,
                    ${JSON.stringify(f.parameters)}::jsonb, ${f.is_active}, ${f.hitl_mode})
            RETURNING ${selected}`
      })

      const updateRow = SqlSchema.findOneOption({
        Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String, fields: ActionFields }),
        Result: ActionRow,
        execute: ({ fields: f, id, tenantId }) =>
          sql`
            UPDATE actions SET name = ${f.name}, description = ${f.description}, http_method = ${f.http_method}, url = ${f.url},
              headers = ${JSON.stringify(f.headers)}::jsonb, parameters = ${JSON.stringify(f.parameters)}::jsonb,
              is_active = ${f.is_active}, hitl_mode = ${f.hitl_mode},
              hitl_version = hitl_version + (CASE WHEN hitl_mode = ${f.hitl_mode} THEN 0 ELSE 1 END), updated_at = now()
            WHERE tenant_id = ${tenantId} AND id = ${id}
            RETURNING ${selected}`
      })

      const insertHitlVersion = (tenantId: string, row: ActionRow, changedBy: string) =>
        sql`
          INSERT INTO action_hitl_versions (tenant_id, action_id, version, mode, changed_by)
          VALUES (${tenantId}, ${row.id}, ${row.hitl_version}, ${row.hitl_mode}, ${changedBy})
          ON CONFLICT (action_id, version) DO NOTHING`.pipe(Effect.asVoid)

      return ActionCatalogRepo.of({
        listActive: (tenantId, spaceId) => listActive({ tenantId, spaceId }),
        listAll: (tenantId) => listAll(tenantId),
        find: (tenantId, id, options) =>
          Effect.map(findRow({ tenantId, id, forUpdate: options?.forUpdate === true }), Option.getOrUndefined),
        insert: (tenantId, fields) =>
          insertRow({ tenantId, fields }).pipe(Effect.catchTag("NoSuchElementError", Effect.die)),
        update: (tenantId, id, fields, changedBy) =>
          Effect.gen(function*() {
            const row = Option.getOrUndefined(yield* updateRow({ tenantId, id, fields }))
            if (row !== undefined) yield* insertHitlVersion(tenantId, row, changedBy)
            return row
          }),
        insertHitlVersion
      })
    })
  )
}
