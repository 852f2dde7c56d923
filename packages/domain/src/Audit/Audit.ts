/** Audit hash chains and adoption metrics. */
import { Schema } from "effect"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const ChainName = Schema.Literals(["audit_logs", "admin_audit_log"])

/**
 * The result of re-hashing one chain of the tenant from its first row: each
 * row stores SHA-256(previous hash + canonical JSON of the row), so a changed
 * payload, a deleted row or a reordered row breaks the chain at that row.
 */
export const ChainIntegrity = Schema.Struct({
  valid: Schema.Boolean,
  entries_checked: Count,
  entries_invalid: Count,
  first_invalid_id: Schema.NullOr(Schema.String).annotate({
    description: "The first row that does not verify (after a deleted row: the row that followed it); null when valid"
  }),
  head_hash: Schema.NullOr(Schema.String).annotate({
    description:
      "The hash of the last row; keep it outside the platform to detect a truncated tail later. Null for an empty chain"
  }),
  verified_at: Schema.String
}).annotate({ identifier: "ChainIntegrity" })
export type ChainIntegrity = typeof ChainIntegrity.Type

export const AuditVerification = Schema.Struct({
  entries_checked: Count.annotate({ description: "Rows checked across both chains" }),
  entries_invalid: Count,
  first_invalid_id: Schema.NullOr(Schema.String).annotate({ description: "The first row whose hash does not match" }),
  chains: Schema.Struct({ audit_logs: ChainIntegrity, admin_audit_log: ChainIntegrity })
}).annotate({ identifier: "AuditVerification" })
export type AuditVerification = typeof AuditVerification.Type

const adoptionCounts = {
  active_users: Count.annotate({
    description: "Signed-in users who sent a chat message or triggered or confirmed an action"
  }),
  messages: Count.annotate({ description: "Messages people sent (user messages, over sessions and API keys)" }),
  actions: Count.annotate({ description: "Action executions" })
}

export const Adoption = Schema.Struct({
  days: Schema.Int,
  from: Schema.String.annotate({ description: "First day (UTC), YYYY-MM-DD" }),
  to: Schema.String.annotate({ description: "Last day (UTC, today), YYYY-MM-DD" }),
  daily: Schema.Array(Schema.Struct({ date: Schema.String, ...adoptionCounts })),
  totals: Schema.Struct(adoptionCounts).annotate({
    description: "Over the period; a user active on several days counts once"
  }),
  by_space: Schema.Array(Schema.Struct({ space_id: Schema.String, space_code: Schema.String, ...adoptionCounts }))
}).annotate({ identifier: "Adoption" })
export type Adoption = typeof Adoption.Type
