/**
 * The space binding of API keys (spec "Authentication", rule 4), decided
 * here for every `/v1` endpoint: a key bound to a space reaches that space's
 * agents, their knowledge files, their chats, the actions assigned to them
 * and the space's usage, and nothing of another space. Whatever lies outside
 * answers exactly as a missing resource does (404, the same body), so a bound
 * key cannot even learn that it exists. Unbound keys and signed-in users
 * reach the whole tenant. (`GET /v1/actions` lists the whole catalog: spec
 * rule 2.)
 */
import type { Principal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import { AgentsRepo } from "../Agents/AgentsRepo.ts"

/** The space the caller is confined to, or null for the whole tenant. */
export const boundSpace = (principal: Principal): string | null => (principal._tag === "Key" ? principal.spaceId : null)

/** Whether the caller reaches a resource of `spaceId`. */
export const reachesSpace = (principal: Principal, spaceId: string): boolean => {
  const bound = boundSpace(principal)
  return bound === null || bound === spaceId
}

export class SpaceBinding extends Context.Service<SpaceBinding, {
  /**
   * The agents the caller reaches: `undefined` for the whole tenant, else the
   * ids of its bound space's agents (one indexed read, for bound keys only).
   */
  readonly reachableAgents: (principal: Principal) => Effect.Effect<ReadonlySet<string> | undefined>
  /** Whether the caller reaches the agent (true for an unknown one: the endpoint answers it as missing itself). */
  readonly reachesAgent: (principal: Principal, agentId: string) => Effect.Effect<boolean>
}>()("@agent-platform/server/Access/SpaceBinding") {
  static readonly layer = Layer.effect(
    SpaceBinding,
    Effect.gen(function*() {
      const agents = yield* AgentsRepo
      const reachableAgents = (principal: Principal) => {
        const bound = boundSpace(principal)
        if (bound === null) return Effect.succeed(undefined)
        return agents.list({ tenantId: principal.tenantId, spaceIds: [bound] }).pipe(
          Effect.map((rows): ReadonlySet<string> => new Set(rows.map((row) => row.id))),
          Effect.orDie
        )
      }
      return SpaceBinding.of({
        reachableAgents,
        reachesAgent: (principal, agentId) =>
          Effect.map(reachableAgents(principal), (reachable) => reachable === undefined || reachable.has(agentId))
      })
    })
  ).pipe(Layer.provide(AgentsRepo.layer))
}
