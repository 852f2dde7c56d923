/** Room blueprints, the templates rooms are made from (spec: "A room is created from a blueprint"). */
import { Schema } from "effect"
import { isNotBlank, isStorable } from "../Text.ts"

export const Lifecycle = Schema.Literals(["ephemeral", "persistent"]).annotate({
  description:
    "`persistent`: one live room per ref, reopened after a close; `ephemeral`: a new room per ref after the previous one closed"
})
export type Lifecycle = typeof Lifecycle.Type

export const BlueprintAgent = Schema.Struct({
  agent_id: Schema.String,
  name: Schema.String,
  always_on: Schema.Boolean.annotate({ description: "Always-on agents write the minutes when a room closes" })
}).annotate({ identifier: "BlueprintAgent" })

export const Blueprint = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  lifecycle: Lifecycle,
  space_id: Schema.String,
  agents: Schema.Array(BlueprintAgent).annotate({ description: "Agents that take part in every room made from it" }),
  created_at: Schema.String
}).annotate({ identifier: "Blueprint" })
export type Blueprint = typeof Blueprint.Type

export const maxBlueprintAgents = 20

/**
 * Each agent at most once: a repeated agent (perhaps with another `always_on`)
 * is refused naming it, rather than one of its entries silently kept.
 */
const hasDistinctAgents = Schema.makeFilter(
  (agents: ReadonlyArray<{ readonly agent_id: string }>) => {
    const seen = new Set<string>()
    for (const { agent_id } of agents) {
      if (seen.has(agent_id)) {
        return `agent ${agent_id} is listed more than once: list each agent once, with its always_on`
      }
      seen.add(agent_id)
    }
    return undefined
  }
)

export const CreateBlueprint = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200), isNotBlank, isStorable).annotate({
    description: "Not only white space (400)"
  }),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2000), isStorable)),
  lifecycle: Lifecycle,
  space_id: Schema.String.annotate({ description: "The space whose agents the rooms use" }),
  agents: Schema.optionalKey(
    Schema.Array(Schema.Struct({ agent_id: Schema.String, always_on: Schema.optionalKey(Schema.Boolean) }))
      .check(Schema.isMaxLength(maxBlueprintAgents), hasDistinctAgents)
  ).annotate({
    description:
      "Agents of the space that join every room, each once (400 naming a repeated one); `always_on` default false"
  })
})

export const BlueprintList = Schema.Struct({ blueprints: Schema.Array(Blueprint) })

export const SeedDefaults = Schema.Struct({ space_id: Schema.String })

export const SeededDefaults = Schema.Struct({
  blueprint_ids: Schema.Struct({ persistent: Schema.String, ephemeral: Schema.String }),
  agent_ids: Schema.Struct({ summary: Schema.String, decisions: Schema.String })
}).annotate({ identifier: "SeededDefaults" })
