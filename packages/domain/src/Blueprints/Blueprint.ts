/** Room blueprints (spec: "A room is created from a blueprint"). */
import { Schema } from "effect"

export const Lifecycle = Schema.Literals(["ephemeral", "persistent"]).annotate({
  description: "`ephemeral`: a new room per ref after the previous one closed; `persistent`: one live room per ref"
})

export const Blueprint = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  lifecycle: Lifecycle,
  space_id: Schema.NullOr(Schema.String),
  agent_ids: Schema.Array(Schema.String).annotate({ description: "Agents joined to every room made from it" }),
  created_at: Schema.String
}).annotate({ identifier: "Blueprint" })

export const CreateBlueprint = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2000))),
  lifecycle: Lifecycle,
  space_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  agent_ids: Schema.optionalKey(Schema.Array(Schema.String))
})

export const SeedDefaults = Schema.Struct({ space_id: Schema.optionalKey(Schema.String) })

export const SeededDefaults = Schema.Struct({
  agent_ids: Schema.Array(Schema.String),
  blueprint_ids: Schema.Array(Schema.String)
})
