/**
 * The agent catalog: what API keys read (`/v1/agents/:id`: an agent's detail
 * with its active actions and knowledge files; the list is served from
 * Agents/AgentLists.ts) and what administrators change (`/api/admin/agents`),
 * each change dropping the tenant's cached lists on every replica.
 *
 * Rules the service keeps:
 * - one primary agent per space: setting a new one unsets the old one in the
 *   same transaction, under a lock of the space row (the unique index
 *   `agents_one_primary_per_space` is the last line of defence);
 * - a Space Admin administers the agents of their spaces only. To them an
 *   agent of another space does not exist (404, as across tenants), and
 *   naming another space (create, list filter) is a 403;
 * - every change is appended to the tenant's `admin_audit_log` chain in the
 *   transaction that makes it.
 */
import {
  type AgentAdmin,
  type Agents as AgentSchemas,
  Errors,
  isAdmin,
  type UserPrincipal
} from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { isUuid } from "../Platform/Ids.ts"
import { notSpaceAdminOf, SpaceAdmins } from "../SpaceAdmin/SpaceAdmins.ts"
import { AgentLists, toAgent } from "./AgentLists.ts"
import { type AgentChanges, type AgentRow, AgentsRepo } from "./AgentsRepo.ts"

type AdminAgent = AgentAdmin.AdminAgent

const toAdminAgent = (row: AgentRow): AdminAgent => ({
  id: row.id,
  space_id: row.space_id,
  space_code: row.space_code,
  name: row.name,
  summary: row.summary,
  is_primary: row.is_primary,
  always_on: row.always_on,
  instructions: row.instructions,
  action_ids: row.action_ids,
  created_at: row.created_at.toISOString()
})

const agentNotFound = (id: string) => new Errors.NotFound({ error: `agent ${id} not found` })

const spaceDenied = (spaceId: string, theirSpaces: ReadonlyArray<string>) =>
  new Errors.AccessDenied({
    error: notSpaceAdminOf(spaceId, theirSpaces, "only an administrator can manage its agents")
  })

/** The spaces an administrator may manage: all of the tenant's, or a Space Admin's own. */
type Reach = { readonly _tag: "Tenant" } | { readonly _tag: "Spaces"; readonly spaceIds: ReadonlyArray<string> }

export class Agents extends Context.Service<Agents, {
  /** An agent's detail; 404 for an unknown one, or one outside `boundSpace` when given. */
  readonly detail: (
    tenantId: string,
    id: string,
    boundSpace?: string | null
  ) => Effect.Effect<AgentSchemas.AgentDetail, Errors.NotFound>
  readonly adminList: (
    actor: UserPrincipal,
    spaceId?: string | undefined
  ) => Effect.Effect<{ readonly agents: ReadonlyArray<AdminAgent> }, Errors.AccessDenied>
  readonly create: (
    actor: UserPrincipal,
    input: typeof AgentAdmin.CreateAgent.Type
  ) => Effect.Effect<AdminAgent, Errors.AccessDenied | Errors.NotFound>
  readonly update: (
    actor: UserPrincipal,
    id: string,
    input: typeof AgentAdmin.UpdateAgent.Type
  ) => Effect.Effect<AdminAgent, Errors.NotFound>
  readonly remove: (
    actor: UserPrincipal,
    id: string
  ) => Effect.Effect<{ readonly success: true; readonly message: string }, Errors.NotFound>
  /** Replaces the agent's actions; unknown action ids are a 400 naming them. */
  readonly assignActions: (
    actor: UserPrincipal,
    id: string,
    actionIds: ReadonlyArray<string>
  ) => Effect.Effect<AdminAgent, Errors.InvalidRequest | Errors.NotFound>
}>()("@agent-platform/server/Agents/Agents") {
  static readonly layer = Layer.effect(
    Agents,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* AgentsRepo
      const audit = yield* AuditLog
      const spaceAdmins = yield* SpaceAdmins
      const lists = yield* AgentLists
      /** A change of the tenant's agents in one transaction; no replica serves the old lists once it returns. */
      const changing = <A, E, R>(tenantId: string, change: Effect.Effect<A, E, R>) =>
        lists.changing(tenantId, (publish) => sql.withTransaction(Effect.tap(change, () => publish)))

      const reachOf = (actor: UserPrincipal) =>
        isAdmin(actor.roleId)
          ? Effect.succeed<Reach>({ _tag: "Tenant" })
          : Effect.map(
            spaceAdmins.spacesOf(actor.tenantId, actor.userId),
            (spaceIds): Reach => ({ _tag: "Spaces", spaceIds })
          )

      const mayManage = (reach: Reach, spaceId: string) => reach._tag === "Tenant" || reach.spaceIds.includes(spaceId)

      const findRow = (
        tenantId: string,
        id: string
      ) => (isUuid(id) ? repo.find(tenantId, id) : Effect.succeed(undefined))

      /** The agent as its administrator may see it, or 404. */
      const manageable = Effect.fnUntraced(function*(actor: UserPrincipal, id: string) {
        const row = yield* findRow(actor.tenantId, id).pipe(Effect.orDie)
        if (row === undefined || !mayManage(yield* Effect.orDie(reachOf(actor)), row.space_id)) {
          return yield* agentNotFound(id)
        }
        return row
      })

      const audited = (actor: UserPrincipal, event: string, id: string, data: Record<string, unknown>) =>
        audit.append("admin_audit_log", {
          tenantId: actor.tenantId,
          event,
          actor: `user:${actor.userId}`,
          target: `agent:${id}`,
          data
        })

      const detail = Effect.fn("Agents.detail")(function*(tenantId: string, id: string, boundSpace?: string | null) {
        const row = yield* findRow(tenantId, id).pipe(Effect.orDie)
        // Outside a bound key's space, an agent looks missing (Access/SpaceBinding.ts).
        if (row === undefined || (boundSpace != null && row.space_id !== boundSpace)) return yield* agentNotFound(id)
        const [actions, files] = yield* Effect.all([
          repo.activeActions(tenantId, id),
          repo.knowledgeFiles(tenantId, id)
        ]).pipe(
          Effect.orDie
        )
        return { ...toAgent(row), actions, knowledge_files: files }
      })

      /** Whether the tenant has the space: one it has not (or another tenant's) is unknown to everyone alike. */
      const spaceExists = (tenantId: string, spaceId: string) =>
        isUuid(spaceId) ? Effect.orDie(repo.spaceExists(tenantId, spaceId)) : Effect.succeed(false)

      const adminList = Effect.fn("Agents.adminList")(function*(actor: UserPrincipal, spaceId?: string | undefined) {
        const reach = yield* Effect.orDie(reachOf(actor))
        if (spaceId !== undefined && !mayManage(reach, spaceId)) {
          // An unknown space lists nothing, as for an administrator; a space of the tenant not theirs is a 403.
          if (!(yield* spaceExists(actor.tenantId, spaceId))) return { agents: [] }
          return yield* spaceDenied(spaceId, reach._tag === "Spaces" ? reach.spaceIds : [])
        }
        const rows = yield* repo.list({
          tenantId: actor.tenantId,
          spaceIds: spaceId !== undefined
            ? [spaceId].filter(isUuid)
            : reach._tag === "Spaces"
            ? reach.spaceIds
            : undefined
        }).pipe(Effect.orDie)
        return { agents: rows.map(toAdminAgent) }
      })

      const create = Effect.fn("Agents.create")(
        function*(actor: UserPrincipal, input: typeof AgentAdmin.CreateAgent.Type) {
          const reach = yield* Effect.orDie(reachOf(actor))
          const spaceNotFound = () => new Errors.NotFound({ error: `space ${input.space_id} not found` })
          if (!mayManage(reach, input.space_id)) {
            // An unknown space (or another tenant's) is a 404 for everyone; a space of the tenant not theirs a 403.
            if (!(yield* spaceExists(actor.tenantId, input.space_id))) return yield* spaceNotFound()
            return yield* spaceDenied(input.space_id, reach._tag === "Spaces" ? reach.spaceIds : [])
          }
          if (!isUuid(input.space_id)) return yield* spaceNotFound()
          const created = yield* Effect.gen(function*() {
            if (!(yield* repo.lockSpace(actor.tenantId, input.space_id))) return undefined
            if (input.is_primary) yield* repo.unsetPrimary(actor.tenantId, input.space_id, null)
            const id = yield* repo.insert({
              tenantId: actor.tenantId,
              spaceId: input.space_id,
              name: input.name,
              summary: input.summary,
              instructions: input.instructions ?? null,
              isPrimary: input.is_primary,
              alwaysOn: input.always_on ?? false
            })
            yield* audited(actor, "agent.created", id, {
              space_id: input.space_id,
              name: input.name,
              is_primary: input.is_primary,
              always_on: input.always_on ?? false
            })
            return yield* repo.find(actor.tenantId, id)
          }).pipe((change) => changing(actor.tenantId, change), Effect.orDie)
          if (created === undefined) return yield* spaceNotFound()
          return toAdminAgent(created)
        }
      )

      const update = Effect.fn("Agents.update")(
        function*(actor: UserPrincipal, id: string, input: typeof AgentAdmin.UpdateAgent.Type) {
          const row = yield* manageable(actor, id)
          const changes: AgentChanges = {
            ...(input.name === undefined ? {} : { name: input.name }),
            ...(input.summary === undefined ? {} : { summary: input.summary }),
            ...(input.instructions === undefined ? {} : { instructions: input.instructions }),
            ...(input.is_primary === undefined ? {} : { is_primary: input.is_primary }),
            ...(input.always_on === undefined ? {} : { always_on: input.always_on })
          }
          if (Object.keys(changes).length === 0) return toAdminAgent(row)
          const updated = yield* Effect.gen(function*() {
            yield* repo.lockSpace(actor.tenantId, row.space_id)
            if (changes.is_primary === true) yield* repo.unsetPrimary(actor.tenantId, row.space_id, id)
            yield* repo.update(actor.tenantId, id, changes)
            // Instructions can be long: the audit entry records that they changed, not their text.
            const { instructions, ...rest } = changes
            yield* audited(
              actor,
              "agent.updated",
              id,
              instructions === undefined ? rest : { ...rest, instructions: "changed" }
            )
            return yield* repo.find(actor.tenantId, id)
          }).pipe((change) => changing(actor.tenantId, change), Effect.orDie)
          // Deleted by another administrator in between.
          if (updated === undefined) return yield* agentNotFound(id)
          return toAdminAgent(updated)
        }
      )

      const remove = Effect.fn("Agents.remove")(function*(actor: UserPrincipal, id: string) {
        const row = yield* manageable(actor, id)
        const removed = yield* Effect.gen(function*() {
          const removed = yield* repo.remove(actor.tenantId, id)
          if (removed) yield* audited(actor, "agent.deleted", id, { space_id: row.space_id, name: row.name })
          return removed
        }).pipe((change) => changing(actor.tenantId, change), Effect.orDie)
        if (!removed) return yield* agentNotFound(id)
        return {
          success: true as const,
          message: `agent ${id} deleted, with its knowledge files and action assignments`
        }
      })

      const assignActions = Effect.fn("Agents.assignActions")(
        function*(actor: UserPrincipal, id: string, actionIds: ReadonlyArray<string>) {
          yield* manageable(actor, id)
          const wanted = [...new Set(actionIds)]
          const known = new Set(yield* repo.knownActionIds(actor.tenantId, wanted.filter(isUuid)).pipe(Effect.orDie))
          const unknown = wanted.filter((actionId) => !known.has(actionId))
          if (unknown.length > 0) {
            return yield* new Errors.InvalidRequest({
              error: `action_ids: unknown action${unknown.length === 1 ? "" : "s"} ${
                unknown.join(", ")
              }; create them with POST /api/admin/actions first`
            })
          }
          const updated = yield* Effect.gen(function*() {
            yield* repo.replaceActions(id, wanted)
            yield* audited(actor, "agent.actions_assigned", id, { action_ids: wanted })
            return yield* repo.find(actor.tenantId, id)
          }).pipe(sql.withTransaction, Effect.orDie)
          if (updated === undefined) return yield* agentNotFound(id)
          return toAdminAgent(updated)
        }
      )

      return Agents.of({ detail, adminList, create, update, remove, assignActions })
    })
  ).pipe(Layer.provide(Layer.merge(AgentsRepo.layer, AgentLists.layer)))
}
