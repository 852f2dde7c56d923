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
}).annotate({
  identifier: "Usage",
  examples: [{
    period: "7d",
    from: "2026-01-08T09:30:00.000Z",
    to: "2026-01-15T09:30:00.000Z",
    messages: 120,
    tokens: { input: 5400, output: 9100, total: 14500 },
    successful_action_executions: 7,
    by_space: [{
      space_id: "0b8e4f0e-8f7a-4d7b-9a63-1c2d3e4f5a6b",
      space_code: "support",
      messages: 120,
      tokens: { input: 5400, output: 9100, total: 14500 },
      successful_action_executions: 7
    }]
  }]
})
export type Usage = typeof Usage.Type
