/** Audit hash chains and adoption metrics. */
import { Schema } from "effect"

export const ChainName = Schema.Literals(["audit_logs", "admin_audit_log"])

/** The result of re-hashing one chain of the tenant from its first row. */
export const ChainVerification = Schema.Struct({
  entries_checked: Schema.Int,
  entries_invalid: Schema.Int,
  first_invalid_id: Schema.NullOr(Schema.String)
})

export const AuditVerification = Schema.Struct({
  entries_checked: Schema.Int.annotate({ description: "Rows checked across both chains" }),
  entries_invalid: Schema.Int,
  first_invalid_id: Schema.NullOr(Schema.String).annotate({ description: "The first row whose hash does not match" }),
  chains: Schema.Struct({ audit_logs: ChainVerification, admin_audit_log: ChainVerification })
}).annotate({ identifier: "AuditVerification" })
export type AuditVerification = typeof AuditVerification.Type

const adoptionCounts = {
  active_users: Schema.Int,
  messages: Schema.Int,
  actions: Schema.Int
}

export const Adoption = Schema.Struct({
  days: Schema.Int,
  from: Schema.String,
  to: Schema.String,
  totals: Schema.Struct(adoptionCounts),
  daily: Schema.Array(Schema.Struct({ date: Schema.String, ...adoptionCounts })),
  by_space: Schema.Array(Schema.Struct({ space_id: Schema.String, space_code: Schema.String, ...adoptionCounts }))
}).annotate({ identifier: "Adoption" })
