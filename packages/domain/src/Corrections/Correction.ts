/** Decision records: human corrections of agent output (spec: corrections endpoints). */
import { Schema } from "effect"

export const CorrectionStatus = Schema.Literals(["open", "accepted", "rejected"])

export const CreateCorrection = Schema.Struct({
  message_id: Schema.String.annotate({ description: "The agent message being corrected" }),
  corrected_output: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(16_000)),
  reason: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4000)))
})

export const CorrectionCreated = Schema.Struct({ id: Schema.String, status: Schema.Literal("open") })

export const DecisionRecord = Schema.Struct({
  id: Schema.String,
  chat_id: Schema.String,
  message_id: Schema.String,
  agent_id: Schema.String,
  original_output: Schema.String.annotate({ description: "Taken from the stored message; never from the payload" }),
  corrected_output: Schema.String,
  reason: Schema.NullOr(Schema.String),
  status: CorrectionStatus,
  created_by: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "DecisionRecord" })
