/**
 * The agent lists of `GET /v1/agents`, cached per tenant (and per `?space=`
 * filter and bound space) as the response's JSON text, so a list read costs
 * neither a query nor an encoding (and Node sends a text body with its headers
 * in one write).
 *
 * A change of a tenant's agents drops the tenant's lists on every replica
 * before it answers (the protocol of Platform/ReplicaCaches.ts: the change
 * runs in {@link AgentLists.changing}). A trigger on `agents` and `spaces`
 * (migration 0014) also drops them for a change made by any other path, as
 * soon as it commits. A replica that stops hearing the channel reads from the
 * database until it hears itself again.
 */
import { Agents as AgentSchemas } from "@agent-platform/domain"
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { ReplicaCaches } from "../Platform/ReplicaCaches.ts"
import { type AgentRow, AgentsRepo } from "./AgentsRepo.ts"

/** The name of the cache in the replica protocol (the trigger of migration 0014 uses it too). */
export const agentListsCache = "agents"

/** Tenants whose lists are kept; beyond, the least recently filled tenant's are dropped. */
const maxTenants = 10_000
/** Lists kept per tenant (`?space=` is the caller's text: it must not grow the cache without bound). */
const maxListsPerTenant = 64

export const toAgent = (row: AgentRow): AgentSchemas.Agent => ({
  id: row.id,
  name: row.name,
  summary: row.summary,
  is_primary: row.is_primary,
  group_id: row.space_id,
  space_code: row.space_code
})

const encodeList = Schema.encodeSync(AgentSchemas.AgentList)

export class AgentLists extends Context.Service<AgentLists, {
  /**
   * The JSON text of the tenant's agent list (of one space given by id or
   * code, when given; only `boundSpace`'s agents, when given).
   */
  readonly encoded: (
    tenantId: string,
    space: string | undefined,
    boundSpace: string | null
  ) => Effect.Effect<string, SqlError | Schema.SchemaError>
  /** {@link encoded}'s list when this replica holds it, as a plain value (no effect step); else `undefined`. */
  readonly held: (tenantId: string, space: string | undefined, boundSpace: string | null) => string | undefined
  /**
   * Runs a change of the tenant's agents: `change` runs `publish` inside its
   * transaction; when it returns, no replica serves the tenant's old lists.
   */
  readonly changing: <A, E, R>(
    tenantId: string,
    change: (publish: Effect.Effect<void, SqlError>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}>()("@agent-platform/server/Agents/AgentLists") {
  static readonly layer = Layer.effect(
    AgentLists,
    Effect.gen(function*() {
      const repo = yield* AgentsRepo
      const replicas = yield* ReplicaCaches
      const lists = new Map<string, Map<string, string>>()
      // Bumped by every eviction: a read that started before one must not store what it read.
      const generations = new Map<string, number>()
      let generation = 0

      const evict = (tenantId: string) => {
        generations.set(tenantId, ++generation)
        lists.delete(tenantId)
      }
      replicas.register(agentListsCache, {
        evict: (tenantId) => Effect.sync(() => evict(tenantId)),
        clear: Effect.sync(() => {
          generation++
          generations.clear()
          lists.clear()
        })
      })

      const read = (tenantId: string, space: string | undefined, boundSpace: string | null) =>
        repo.list({ tenantId, space, spaceIds: boundSpace === null ? undefined : [boundSpace] }).pipe(
          Effect.map((rows) => JSON.stringify(encodeList({ agents: rows.map(toAgent) })))
        )

      const store = (tenantId: string, list: string, json: string) => {
        let tenant = lists.get(tenantId)
        if (tenant === undefined) {
          if (lists.size >= maxTenants) lists.delete(lists.keys().next().value!)
          tenant = new Map()
          lists.set(tenantId, tenant)
        }
        if (tenant.size >= maxListsPerTenant) tenant.delete(tenant.keys().next().value!)
        tenant.set(list, json)
      }

      const listName = (space: string | undefined, boundSpace: string | null) =>
        `${boundSpace ?? ""}\u0000${space ?? ""}`
      const held = (tenantId: string, space: string | undefined, boundSpace: string | null) =>
        replicas.trusted() ? lists.get(tenantId)?.get(listName(space, boundSpace)) : undefined
      const encoded = (tenantId: string, space: string | undefined, boundSpace: string | null) => {
        if (!replicas.trusted()) return read(tenantId, space, boundSpace)
        const list = listName(space, boundSpace)
        const cached = lists.get(tenantId)?.get(list)
        if (cached !== undefined) return Effect.succeed(cached)
        const before = generations.get(tenantId)
        const cleared = generation
        return Effect.tap(read(tenantId, space, boundSpace), (json) =>
          Effect.sync(() => {
            // Stored only when no eviction of this tenant (nor a clearing) came in between.
            if (generations.get(tenantId) === before && (before !== undefined || cleared === generation)) {
              store(tenantId, list, json)
            }
          }))
      }

      return AgentLists.of({
        encoded,
        held,
        changing: (tenantId, change) => replicas.evicting(agentListsCache, tenantId, change)
      })
    })
  ).pipe(Layer.provide(Layer.merge(AgentsRepo.layer, ReplicaCaches.layer)))
}
