/** Tenant security policies: IP allowlist and password policy (fields designed here; spec: "not shown"). */
import { Schema } from "effect"
import { isCharacterCountBetween } from "../Text.ts"

export const IpRule = Schema.Struct({
  id: Schema.String,
  cidr: Schema.String.annotate({ description: "IPv4 or IPv6 CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32" }),
  description: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotate({ identifier: "IpAllowlistRule" })

export const IpRuleList = Schema.Struct({ rules: Schema.Array(IpRule) })

export const CreateIpRule = Schema.Struct({
  cidr: Schema.String.check(isCharacterCountBetween(2, 64)),
  description: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(500)))),
  force: Schema.optionalKey(Schema.Boolean).annotate({
    description: "Add the rule even though the caller's current IP would be locked out"
  })
})

export const PasswordPolicy = Schema.Struct({
  min_length: Schema.Int.check(Schema.isGreaterThanOrEqualTo(8), Schema.isLessThanOrEqualTo(128)),
  require_uppercase: Schema.Boolean,
  require_lowercase: Schema.Boolean,
  require_digit: Schema.Boolean,
  require_symbol: Schema.Boolean,
  max_age_days: Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(3650)))
    .annotate({ description: "Days until a password expires; null = never" }),
  lockout_threshold: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(100))
    .annotate({ description: "Consecutive failures allowed; one more blocks the account" }),
  lockout_minutes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(10_080))
}).annotate({ identifier: "PasswordPolicy" })
export type PasswordPolicy = typeof PasswordPolicy.Type
