/**
 * The tenant's action catalog: the active entries API keys list (`GET
 * /v1/actions`, not filtered by the key's space) and MCP serves as tools, and
 * the administration of every entry (`/api/admin/actions`). Deleting an
 * action deactivates it: its executions keep their history, agents keep the
 * assignment (it shows again if the action is reactivated), and nobody can
 * run it meanwhile. Every change is appended to the tenant's
 * `admin_audit_log` chain in the transaction that makes it.
 */
import type { ActionAdmin, Actions, UserPrincipal } from "@agent-platform/domain"
import { Errors } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { isUuid } from "../Platform/Ids.ts"
import { ActionCatalogRepo, type ActionFields, type ActionRow } from "./ActionCatalogRepo.ts"
import { definitionProblems } from "./ActionDefinition.ts"

type AdminAction = ActionAdmin.AdminAction

const toAction = (row: ActionRow): Actions.Action => ({
  id: row.id,
  name: row.name,
  description: row.description,
  http_method: row.http_method,
  is_active: row.is_active,
  parameters: row.parameters
})

const toAdminAction = (row: ActionRow): AdminAction => ({
  id: row.id,
  name: row.name,
  description: row.description,
  http_method: row.http_method,
  url: row.url,
  headers: row.headers,
  parameters: row.parameters,
  is_active: row.is_active,
  requires_confirmation: row.hitl_mode === "confirm",
  hitl_mode: row.hitl_mode,
  hitl_version: row.hitl_version,
  created_at: row.created_at.toISOString()
})

/** What the audit entry keeps of an action: header values may hold credentials, so only their names. */
const auditView = (fields: ActionFields) => ({
  name: fields.name,
  http_method: fields.http_method,
  url: fields.url,
  header_names: Object.keys(fields.headers),
  parameters: fields.parameters.map((p) => p.name),
  is_active: fields.is_active,
  hitl_mode: fields.hitl_mode
})

/**
 * The mode a payload asks for: `hitl_mode`, or the legacy `requires_confirmation`
 * (true is confirm; false turns confirm back to auto and leaves other modes alone).
 */
const requestedMode = (
  input: { readonly hitl_mode?: ActionAdmin.HitlMode; readonly requires_confirmation?: boolean },
  current: ActionAdmin.HitlMode
): Effect.Effect<ActionAdmin.HitlMode, Errors.InvalidRequest> => {
  const legacy = input.requires_confirmation === undefined
    ? undefined
    : input.requires_confirmation
    ? "confirm"
    : current === "confirm"
    ? "auto"
    : current
  if (
    input.hitl_mode !== undefined && legacy !== undefined &&
    (input.hitl_mode === "confirm") !== input.requires_confirmation
  ) {
    return Effect.fail(
      new Errors.InvalidRequest({ error: "hitl_mode and requires_confirmation disagree; send hitl_mode alone" })
    )
  }
  return Effect.succeed(input.hitl_mode ?? legacy ?? current)
}

const actionNotFound = (id: string) => new Errors.NotFound({ error: `action ${id} not found` })

const validated = (fields: ActionFields) => {
  const problems = definitionProblems(fields)
  return problems.length === 0
    ? Effect.succeed(fields)
    : Effect.fail(new Errors.InvalidRequest({ error: problems.join("; ") }))
}

export class ActionCatalog extends Context.Service<ActionCatalog, {
  /** The tenant's active actions (spec: "only active actions are listed"). */
  readonly catalog: (tenantId: string) => Effect.Effect<ReadonlyArray<Actions.Action>>
  /** The active actions a caller may run: all of them without a space, else those of the space's agents. */
  readonly runnable: (tenantId: string, spaceId: string | null) => Effect.Effect<ReadonlyArray<Actions.Action>>
  readonly adminList: (tenantId: string) => Effect.Effect<ReadonlyArray<AdminAction>>
  readonly create: (
    admin: UserPrincipal,
    input: typeof ActionAdmin.CreateAction.Type
  ) => Effect.Effect<AdminAction, Errors.InvalidRequest>
  readonly update: (
    admin: UserPrincipal,
    id: string,
    input: typeof ActionAdmin.UpdateAction.Type
  ) => Effect.Effect<AdminAction, Errors.InvalidRequest | Errors.NotFound>
  /** Soft delete: `is_active` false. Deactivating an inactive action changes nothing. */
  readonly deactivate: (admin: UserPrincipal, id: string) => Effect.Effect<AdminAction, Errors.NotFound>
}>()("@agent-platform/server/Actions/ActionCatalog") {
  static readonly layer = Layer.effect(
    ActionCatalog,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ActionCatalogRepo
      const audit = yield* AuditLog

      const audited = (admin: UserPrincipal, event: string, id: string, data: Record<string, unknown>) =>
        audit.append("admin_audit_log", {
          tenantId: admin.tenantId,
          event,
          actor: `user:${admin.userId}`,
          target: `action:${id}`,
          data
        })

      const catalog = (tenantId: string) =>
        Effect.orDie(Effect.map(repo.listActive(tenantId, null), (rows) => rows.map(toAction)))

      const runnable = (tenantId: string, spaceId: string | null) =>
        Effect.orDie(Effect.map(repo.listActive(tenantId, spaceId), (rows) => rows.map(toAction)))

      const adminList = (tenantId: string) =>
        Effect.orDie(Effect.map(repo.listAll(tenantId), (rows) => rows.map(toAdminAction)))

      const create = Effect.fn("ActionCatalog.create")(
        function*(admin: UserPrincipal, input: typeof ActionAdmin.CreateAction.Type) {
          const fields = yield* validated({
            name: input.name,
            description: input.description,
            http_method: input.http_method,
            url: input.url,
            headers: input.headers ?? {},
            parameters: input.parameters,
            is_active: input.is_active,
            hitl_mode: yield* requestedMode(input, "auto")
          })
          const row = yield* Effect.gen(function*() {
            const row = yield* repo.insert(admin.tenantId, fields)
            yield* repo.insertHitlVersion(admin.tenantId, row, `user:${admin.userId}`)
            yield* audited(admin, "action.created", row.id, { ...auditView(fields), hitl_version: row.hitl_version })
            return row
          }).pipe(sql.withTransaction, Effect.orDie)
          return toAdminAction(row)
        }
      )

      const update = Effect.fn("ActionCatalog.update")(
        function*(admin: UserPrincipal, id: string, input: typeof ActionAdmin.UpdateAction.Type) {
          if (!isUuid(id)) return yield* actionNotFound(id)
          // Read, merge, check and write under the row's lock: two administrators' changes cannot interleave.
          const outcome = yield* Effect.gen(function*() {
            const current = yield* repo.find(admin.tenantId, id, { forUpdate: true })
            if (current === undefined) return yield* actionNotFound(id)
            const fields = yield* validated({
              name: input.name ?? current.name,
              description: input.description ?? current.description,
              http_method: input.http_method ?? current.http_method,
              url: input.url ?? current.url,
              headers: input.headers ?? current.headers,
              parameters: input.parameters ?? current.parameters,
              is_active: input.is_active ?? current.is_active,
              hitl_mode: yield* requestedMode(input, current.hitl_mode)
            })
            const row = yield* repo.update(admin.tenantId, id, fields, `user:${admin.userId}`)
            if (row === undefined) return yield* actionNotFound(id)
            yield* audited(admin, "action.updated", id, { changed: Object.keys(input), ...auditView(fields) })
            if (row.hitl_version !== current.hitl_version) {
              // The snapshot of the new configuration, on the chain: compliance reads who changed what, when.
              yield* audited(admin, "action.hitl_changed", id, {
                version: row.hitl_version,
                mode: row.hitl_mode,
                previous_version: current.hitl_version,
                previous_mode: current.hitl_mode
              })
            }
            return row
          }).pipe(sql.withTransaction, Effect.catchTag(["SqlError", "SchemaError"], Effect.die))
          return toAdminAction(outcome)
        }
      )

      const deactivate = Effect.fn("ActionCatalog.deactivate")(function*(admin: UserPrincipal, id: string) {
        if (!isUuid(id)) return yield* actionNotFound(id)
        const outcome = yield* Effect.gen(function*() {
          const current = yield* repo.find(admin.tenantId, id, { forUpdate: true })
          if (current === undefined) return yield* actionNotFound(id)
          if (!current.is_active) return current
          const row = yield* repo.update(admin.tenantId, id, { ...current, is_active: false }, `user:${admin.userId}`)
          if (row === undefined) return yield* actionNotFound(id)
          yield* audited(admin, "action.deactivated", id, { name: current.name })
          return row
        }).pipe(sql.withTransaction, Effect.catchTag(["SqlError", "SchemaError"], Effect.die))
        return toAdminAction(outcome)
      })

      return ActionCatalog.of({ catalog, runnable, adminList, create, update, deactivate })
    })
  ).pipe(Layer.provide(ActionCatalogRepo.layer))
}
