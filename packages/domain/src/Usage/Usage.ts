/** Usage metrics (spec: GET /v1/usage; field names not shown there, designed here). */
import { Schema } from "effect"

export const UsagePeriod = Schema.Literals(["24h", "7d", "30d"])
export type UsagePeriod = typeof UsagePeriod.Type

const counts = {
  messages: Schema.Int.annotate({ description: "Chat messages (user and agent)" }),
  tokens: Schema.Struct({ input: Schema.Int, output: Schema.Int, total: Schema.Int }),
  successful_action_executions: Schema.Int
}

export const Usage = Schema.Struct({
  period: UsagePeriod,
  from: Schema.String,
  to: Schema.String,
  ...counts,
  by_space: Schema.Array(Schema.Struct({ space_id: Schema.String, space_code: Schema.String, ...counts }))
}).annotate({ identifier: "Usage" })
export type Usage = typeof Usage.Type
