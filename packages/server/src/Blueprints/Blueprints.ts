/**
 * Room blueprints: the templates rooms are made from (lifecycle, space, the
 * agents that join every room), and the defaults an administrator seeds per
 * space. Changes go into the tenant's `admin_audit_log` chain.
 */
import { type Blueprints as BlueprintSchemas, Errors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AgentLists } from "../Agents/AgentLists.ts"
import { AuditLog } from "../Audit/AuditLog.ts"
import { isUuid } from "../Platform/Ids.ts"
import { type BlueprintAgentRow, type BlueprintRow, BlueprintsRepo } from "./BlueprintsRepo.ts"

const toBlueprint = (row: BlueprintRow, agents: ReadonlyArray<BlueprintAgentRow>): BlueprintSchemas.Blueprint => ({
  id: row.id,
  name: row.name,
  description: row.description,
  lifecycle: row.lifecycle,
  space_id: row.space_id,
  agents: agents.filter((agent) => agent.blueprint_id === row.id).map((agent) => ({
    agent_id: agent.agent_id,
    name: agent.name,
    always_on: agent.always_on
  })),
  created_at: row.created_at.toISOString()
})

const spaceNotFound = (spaceId: string) =>
  new Errors.NotFound({ error: `space ${spaceId} not found: list the spaces with GET /api/admin/spaces` })

export class Blueprints extends Context.Service<Blueprints, {
  readonly list: (tenantId: string) => Effect.Effect<typeof BlueprintSchemas.BlueprintList.Type>
  /** The blueprint with its agents, or undefined (unknown, another tenant's, not a UUID). */
  readonly find: (tenantId: string, id: string) => Effect.Effect<BlueprintSchemas.Blueprint | undefined>
  /** The tenant's seeded ephemeral blueprint, for rooms made without one. */
  readonly defaultBlueprint: (tenantId: string) => Effect.Effect<BlueprintSchemas.Blueprint | undefined>
  readonly create: (
    actor: UserPrincipal,
    input: typeof BlueprintSchemas.CreateBlueprint.Type
  ) => Effect.Effect<BlueprintSchemas.Blueprint, Errors.InvalidRequest | Errors.NotFound>
  readonly seedDefaults: (
    actor: UserPrincipal,
    spaceId: string
  ) => Effect.Effect<typeof BlueprintSchemas.SeededDefaults.Type, Errors.NotFound>
}>()("@agent-platform/server/Blueprints/Blueprints") {
  static readonly layer = Layer.effect(
    Blueprints,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* BlueprintsRepo
      const audit = yield* AuditLog
      const lists = yield* AgentLists

      const withAgents = (row: BlueprintRow | undefined) =>
        row === undefined
          ? Effect.succeed(undefined)
          : Effect.map(repo.agentsOf([row.id]), (agents) => toBlueprint(row, agents))

      const list = (tenantId: string) =>
        Effect.gen(function*() {
          const rows = yield* repo.list(tenantId)
          const agents = yield* repo.agentsOf(rows.map((row) => row.id))
          return { blueprints: rows.map((row) => toBlueprint(row, agents)) }
        }).pipe(Effect.orDie)

      const find = (tenantId: string, id: string) =>
        isUuid(id) ? Effect.orDie(Effect.flatMap(repo.find(tenantId, id), withAgents)) : Effect.succeed(undefined)

      const defaultBlueprint = (tenantId: string) =>
        Effect.orDie(Effect.flatMap(repo.defaultBlueprint(tenantId), withAgents))

      const create = Effect.fn("Blueprints.create")(
        function*(actor: UserPrincipal, input: typeof BlueprintSchemas.CreateBlueprint.Type) {
          if (!isUuid(input.space_id) || !(yield* Effect.orDie(repo.spaceExists(actor.tenantId, input.space_id)))) {
            return yield* spaceNotFound(input.space_id)
          }
          const wanted = [
            ...new Map((input.agents ?? []).map((agent) => [agent.agent_id, agent.always_on ?? false])).entries()
          ]
          const found = yield* Effect.orDie(repo.findAgents(actor.tenantId, wanted.map(([id]) => id).filter(isUuid)))
          const inSpace = new Set(found.filter((agent) => agent.space_id === input.space_id).map((agent) => agent.id))
          const refused = wanted.map(([id]) => id).filter((id) => !inSpace.has(id))
          if (refused.length > 0) {
            return yield* new Errors.InvalidRequest({
              error: `agents: ${refused.join(", ")} ${
                refused.length === 1 ? "is not an agent" : "are not agents"
              } of space ${input.space_id}; a blueprint uses its own space's agents`
            })
          }
          const row = yield* Effect.gen(function*() {
            const row = yield* repo.insert({
              tenantId: actor.tenantId,
              spaceId: input.space_id,
              name: input.name,
              description: input.description ?? "",
              lifecycle: input.lifecycle,
              createdBy: actor.userId,
              agents: wanted.map(([agentId, alwaysOn]) => ({ agentId, alwaysOn }))
            })
            yield* audit.append("admin_audit_log", {
              tenantId: actor.tenantId,
              event: "room_blueprint.created",
              actor: `user:${actor.userId}`,
              target: `room_blueprint:${row.id}`,
              data: {
                name: input.name,
                lifecycle: input.lifecycle,
                space_id: input.space_id,
                agent_ids: wanted.map(([id]) => id)
              }
            })
            return row
          }).pipe(sql.withTransaction, Effect.orDie)
          return (yield* withAgents(row).pipe(Effect.orDie))!
        }
      )

      const seedDefaults = Effect.fn("Blueprints.seedDefaults")(function*(actor: UserPrincipal, spaceId: string) {
        if (!isUuid(spaceId) || !(yield* Effect.orDie(repo.spaceExists(actor.tenantId, spaceId)))) {
          return yield* spaceNotFound(spaceId)
        }
        // The seeded agents join the tenant's agent lists: no replica serves the old ones once this returns.
        const seeded = yield* lists.changing(actor.tenantId, (publish) =>
          Effect.gen(function*() {
            const seeded = yield* repo.seed(actor.tenantId, spaceId, actor.userId)
            if (seeded.created > 0) {
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "room_blueprint.defaults_seeded",
                actor: `user:${actor.userId}`,
                target: `space:${spaceId}`,
                data: { agent_ids: seeded.agentIds, blueprint_ids: seeded.blueprintIds }
              })
            }
            yield* publish
            return seeded
          }).pipe(sql.withTransaction)).pipe(Effect.orDie)
        return { blueprint_ids: seeded.blueprintIds, agent_ids: seeded.agentIds }
      })

      return Blueprints.of({ list, find, defaultBlueprint, create, seedDefaults })
    })
  ).pipe(Layer.provide(Layer.merge(BlueprintsRepo.layer, AgentLists.layer)))
}
