/** The compliance pack: decision provenance and chain integrity (`feature_compliance_pack`). */
import { Schema } from "effect"
import { ChainVerification } from "../Audit/Audit.ts"

export const Supervision = Schema.Literals(["human_confirmed", "human_triggered_auto", "autonomous", "shadow"])
export type Supervision = typeof Supervision.Type

export const ProvenanceRow = Schema.Struct({
  execution_id: Schema.String,
  executed_at: Schema.String,
  action_id: Schema.String,
  action_name: Schema.String,
  success: Schema.Boolean,
  status_code: Schema.NullOr(Schema.Int),
  triggered_by: Schema.String.annotate({ description: "`key:<id>` or `user:<id>`" }),
  confirmed_by: Schema.NullOr(Schema.String),
  confirmation_text: Schema.NullOr(Schema.String).annotate({ description: "The confirming message, verbatim" }),
  hitl_config_snapshot: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  supervision: Supervision,
  chat_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ProvenanceRow" })

export const Provenance = Schema.Struct({ count: Schema.Int, rows: Schema.Array(ProvenanceRow) })

export const Integrity = Schema.Struct({
  valid: Schema.Boolean,
  audit_logs: ChainVerification,
  admin_audit_log: ChainVerification
}).annotate({ identifier: "Integrity" })

export const HitlMap = Schema.Struct({
  actions: Schema.Array(Schema.Struct({
    action_id: Schema.String,
    action_name: Schema.String,
    requires_confirmation: Schema.Boolean,
    executions: Schema.Struct({
      human_confirmed: Schema.Int,
      human_triggered_auto: Schema.Int,
      autonomous: Schema.Int,
      shadow: Schema.Int
    }),
    mismatch: Schema.Boolean.annotate({ description: "Executions ran autonomously although confirmation is required" })
  }))
}).annotate({ identifier: "HitlMap" })
