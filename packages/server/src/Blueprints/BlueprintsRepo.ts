/**
 * The room_blueprints and room_blueprint_agents tables, and the seeding of a
 * space's defaults (its minute-taking agents and two blueprints), made
 * idempotent by unique indexes rather than by reading first.
 */
import { Array as Arr, Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface BlueprintRow {
  readonly id: string
  readonly tenant_id: string
  readonly space_id: string
  readonly name: string
  readonly description: string
  readonly lifecycle: "ephemeral" | "persistent"
  readonly created_at: Date
}

export interface BlueprintAgentRow {
  readonly blueprint_id: string
  readonly agent_id: string
  readonly name: string
  readonly always_on: boolean
}

export interface SpaceAgentRow {
  readonly id: string
  readonly space_id: string
  readonly name: string
}

/** The two always-on agents seed-defaults gives a space: each writes one part of a room's minutes. */
export const minuteTakers = [
  {
    role: "summary",
    name: "Summary",
    summary: "Writes the summary of a room's conversation when the room closes.",
    instructions: "When the room closes, summarize the conversation: what happened, what was found, what is still open."
  },
  {
    role: "decisions",
    name: "Decisions",
    summary: "Lists the decisions of a room and who owns each when the room closes.",
    instructions: "When the room closes, list every decision taken in the conversation, one per line, with its owner."
  }
] as const

export const seededBlueprints = [
  {
    seededAs: "persistent",
    name: "Standing room",
    description: "One room per reference for as long as it exists: closing it keeps it, the same reference reopens it."
  },
  {
    seededAs: "ephemeral",
    name: "Incident room",
    description: "A room per occurrence: after it closes, the same reference starts a new room."
  }
] as const

export class BlueprintsRepo extends Context.Service<BlueprintsRepo, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<BlueprintRow>, SqlError>
  readonly find: (tenantId: string, id: string) => Effect.Effect<BlueprintRow | undefined, SqlError>
  /** The tenant's oldest seeded ephemeral blueprint: rooms made without a blueprint use it. */
  readonly defaultBlueprint: (tenantId: string) => Effect.Effect<BlueprintRow | undefined, SqlError>
  readonly agentsOf: (blueprintIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<BlueprintAgentRow>, SqlError>
  readonly insert: (input: {
    readonly tenantId: string
    readonly spaceId: string
    readonly name: string
    readonly description: string
    readonly lifecycle: "ephemeral" | "persistent"
    readonly createdBy: string
    readonly agents: ReadonlyArray<{ readonly agentId: string; readonly alwaysOn: boolean }>
  }) => Effect.Effect<BlueprintRow, SqlError>
  readonly spaceExists: (tenantId: string, spaceId: string) => Effect.Effect<boolean, SqlError>
  /** The tenant's agents among `ids`. */
  readonly findAgents: (
    tenantId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<SpaceAgentRow>, SqlError>
  /**
   * Makes whatever of the space's defaults is missing; run in a transaction.
   * `created` counts the rows it made (0 on a repeat).
   */
  readonly seed: (tenantId: string, spaceId: string, createdBy: string) => Effect.Effect<{
    readonly agentIds: { readonly summary: string; readonly decisions: string }
    readonly blueprintIds: { readonly persistent: string; readonly ephemeral: string }
    readonly created: number
  }, SqlError>
}>()("@agent-platform/server/Blueprints/BlueprintsRepo") {
  static readonly layer = Layer.effect(
    BlueprintsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql.literal("id, tenant_id, space_id, name, description, lifecycle, created_at")
      const first = <A>(rows: ReadonlyArray<A>) => rows[0]

      const insertAgents = (
        blueprintId: string,
        agents: ReadonlyArray<{ readonly agentId: string; readonly alwaysOn: boolean }>
      ) =>
        Arr.isReadonlyArrayNonEmpty(agents)
          ? Effect.map(
            sql`
              INSERT INTO room_blueprint_agents ${
              sql.insert(Arr.map(agents, (agent, position) => ({
                blueprint_id: blueprintId,
                agent_id: agent.agentId,
                always_on: agent.alwaysOn,
                position
              })))
            }
              ON CONFLICT DO NOTHING RETURNING agent_id`,
            (rows) => rows.length
          )
          : Effect.succeed(0)

      const seed = Effect.fnUntraced(function*(tenantId: string, spaceId: string, createdBy: string) {
        let created = 0
        const agentIds: Record<string, string> = {}
        for (const taker of minuteTakers) {
          const inserted = yield* sql<{ id: string }>`
            INSERT INTO agents (tenant_id, space_id, name, summary, instructions, always_on, minutes_role)
            VALUES (${tenantId}, ${spaceId}, ${taker.name}, ${taker.summary}, ${taker.instructions}, true, ${taker.role})
            ON CONFLICT (space_id, minutes_role) WHERE minutes_role IS NOT NULL DO NOTHING
            RETURNING id`
          created += inserted.length
          const [row] = yield* sql<{ id: string }>`
            SELECT id FROM agents WHERE tenant_id = ${tenantId} AND space_id = ${spaceId} AND minutes_role = ${taker.role}`
          agentIds[taker.role] = row.id
        }
        const blueprintIds: Record<string, string> = {}
        for (const blueprint of seededBlueprints) {
          const inserted = yield* sql<{ id: string }>`
            INSERT INTO room_blueprints (tenant_id, space_id, name, description, lifecycle, seeded_as, created_by)
            VALUES (${tenantId}, ${spaceId}, ${blueprint.name}, ${blueprint.description}, ${blueprint.seededAs},
                    ${blueprint.seededAs}, ${createdBy})
            ON CONFLICT (space_id, seeded_as) WHERE seeded_as IS NOT NULL DO NOTHING
            RETURNING id`
          created += inserted.length
          const [row] = yield* sql<{ id: string }>`
            SELECT id FROM room_blueprints WHERE tenant_id = ${tenantId} AND space_id = ${spaceId} AND seeded_as = ${blueprint.seededAs}`
          blueprintIds[blueprint.seededAs] = row.id
          created += yield* insertAgents(
            row.id,
            minuteTakers.map((taker) => ({ agentId: agentIds[taker.role], alwaysOn: true }))
          )
        }
        return {
          agentIds: { summary: agentIds.summary, decisions: agentIds.decisions },
          blueprintIds: { persistent: blueprintIds.persistent, ephemeral: blueprintIds.ephemeral },
          created
        }
      })

      return BlueprintsRepo.of({
        list: (tenantId) =>
          sql<
            BlueprintRow
          >`SELECT ${columns} FROM room_blueprints WHERE tenant_id = ${tenantId} ORDER BY created_at, id`,
        find: (tenantId, id) =>
          Effect.map(
            sql<BlueprintRow>`SELECT ${columns} FROM room_blueprints WHERE tenant_id = ${tenantId} AND id = ${id}`,
            first
          ),
        defaultBlueprint: (tenantId) =>
          Effect.map(
            sql<BlueprintRow>`
              SELECT ${columns} FROM room_blueprints WHERE tenant_id = ${tenantId} AND seeded_as = 'ephemeral'
              ORDER BY created_at, id LIMIT 1`,
            first
          ),
        agentsOf: (blueprintIds) =>
          blueprintIds.length === 0 ? Effect.succeed([]) : sql<BlueprintAgentRow>`
            SELECT b.blueprint_id, b.agent_id, a.name, b.always_on
            FROM room_blueprint_agents b JOIN agents a ON a.id = b.agent_id
            WHERE ${sql.in("b.blueprint_id", blueprintIds)} ORDER BY b.position`,
        insert: (input) =>
          Effect.gen(function*() {
            const [row] = yield* sql<BlueprintRow>`
              INSERT INTO room_blueprints (tenant_id, space_id, name, description, lifecycle, created_by)
              VALUES (${input.tenantId}, ${input.spaceId}, ${input.name}, ${input.description}, ${input.lifecycle}, ${input.createdBy})
              RETURNING ${columns}`
            yield* insertAgents(row.id, input.agents)
            return row
          }),
        spaceExists: (tenantId, spaceId) =>
          Effect.map(
            sql`SELECT 1 FROM spaces WHERE tenant_id = ${tenantId} AND id = ${spaceId}`,
            (rows) => rows.length > 0
          ),
        findAgents: (tenantId, ids) =>
          ids.length === 0 ? Effect.succeed([]) : sql<SpaceAgentRow>`
            SELECT id, space_id, name FROM agents WHERE tenant_id = ${tenantId} AND ${sql.in("id", ids)}`,
        seed
      })
    })
  )
}
