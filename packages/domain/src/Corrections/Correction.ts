/**
 * Decision records: human corrections of agent output (spec: corrections
 * endpoints, rule 5; flag `feature_decision_records`). A record is `open`
 * when created; an administrator moves it to `accepted` or `rejected`, once.
 * An accepted correction becomes part of the agent's knowledge.
 */
import { Schema } from "effect"
import { isNotBlank, StorableString } from "../Text.ts"

export const CorrectionStatus = Schema.Literals(["open", "accepted", "rejected"])
export type CorrectionStatus = typeof CorrectionStatus.Type

export const CreateCorrection = Schema.Struct({
  message_id: Schema.String.annotate({ description: "The agent message being corrected" }),
  corrected_output: StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(16_000), isNotBlank).annotate({
    description: "The right answer; not only white space (400)"
  }),
  reason: Schema.optionalKey(Schema.NullOr(StorableString.check(Schema.isMaxLength(4000)))),
  agent_id: Schema.optionalKey(Schema.String).annotate({
    description: "The agent to teach; defaults to the message's agent and, when given, must be it (400 otherwise)"
  })
}).annotate({
  description: "`original_output` is copied from the stored message; a payload field of that name is ignored."
})

export const CorrectionCreated = Schema.Struct({ id: Schema.String, status: Schema.Literal("open") })

export const DecisionRecord = Schema.Struct({
  id: Schema.String,
  chat_id: Schema.String,
  message_id: Schema.String,
  agent_id: Schema.String,
  original_output: Schema.String.annotate({ description: "Copied from the stored message; never from the payload" }),
  corrected_output: Schema.String,
  reason: Schema.NullOr(Schema.String),
  status: CorrectionStatus,
  created_by: Schema.NullOr(Schema.String).annotate({
    description: "The user who filed it (null once that user is deleted)"
  }),
  created_at: Schema.String,
  resolved_by: Schema.NullOr(Schema.String),
  resolved_at: Schema.NullOr(Schema.String),
  knowledge_file_id: Schema.NullOr(Schema.String).annotate({
    description: "The knowledge file an accepted correction became"
  })
}).annotate({ identifier: "DecisionRecord" })
export type DecisionRecord = typeof DecisionRecord.Type

export const DecisionRecordList = Schema.Struct({ corrections: Schema.Array(DecisionRecord) })

export const ResolveCorrection = Schema.Struct({ status: Schema.Literals(["accepted", "rejected"]) })
