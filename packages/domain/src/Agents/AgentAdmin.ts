/** Agent catalog administration schemas (admin surface). */
import { Schema } from "effect"
import { StorableString } from "../Text.ts"

const Name = StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(100))
const Summary = StorableString.check(Schema.isMaxLength(2000))
const Instructions = StorableString.check(Schema.isMaxLength(20_000))

export const AdminAgent = Schema.Struct({
  id: Schema.String,
  space_id: Schema.String,
  space_code: Schema.String,
  name: Schema.String,
  summary: Schema.String,
  is_primary: Schema.Boolean,
  always_on: Schema.Boolean,
  instructions: Schema.NullOr(Schema.String),
  action_ids: Schema.Array(Schema.String),
  created_at: Schema.String
}).annotate({ identifier: "AdminAgent" })
export type AdminAgent = typeof AdminAgent.Type

export const CreateAgent = Schema.Struct({
  space_id: Schema.String,
  name: Name,
  summary: Summary,
  is_primary: Schema.Boolean.annotate({ description: "Setting a new primary agent unsets the space's old one" }),
  always_on: Schema.optionalKey(Schema.Boolean),
  instructions: Schema.optionalKey(Schema.NullOr(Instructions))
})

export const UpdateAgent = Schema.Struct({
  name: Schema.optionalKey(Name),
  summary: Schema.optionalKey(Summary),
  is_primary: Schema.optionalKey(Schema.Boolean),
  always_on: Schema.optionalKey(Schema.Boolean),
  instructions: Schema.optionalKey(Schema.NullOr(Instructions))
})

export const AssignActions = Schema.Struct({ action_ids: Schema.Array(Schema.String).check(Schema.isMaxLength(200)) })
