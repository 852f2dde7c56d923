/**
 * The tenant's password policy: complexity rules enforced on every password
 * set, expiry, and the lockout that follows repeated failures.
 */
import type { SecurityPolicies } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export type PasswordPolicy = SecurityPolicies.PasswordPolicy

/** The policy of a tenant that never set one. */
export const defaultPolicy: PasswordPolicy = {
  min_length: 12,
  require_uppercase: true,
  require_lowercase: true,
  require_digit: true,
  require_symbol: false,
  max_age_days: null,
  lockout_threshold: 5,
  lockout_minutes: 15
}

/** The rules a password breaks, in words a user can act on; empty when it complies. */
export const brokenRules = (policy: PasswordPolicy, password: string): ReadonlyArray<string> => {
  const broken: Array<string> = []
  if ([...password].length < policy.min_length) broken.push(`at least ${policy.min_length} characters`)
  if (policy.require_uppercase && !/\p{Lu}/u.test(password)) broken.push("an uppercase letter")
  if (policy.require_lowercase && !/\p{Ll}/u.test(password)) broken.push("a lowercase letter")
  if (policy.require_digit && !/\p{Nd}/u.test(password)) broken.push("a digit")
  if (policy.require_symbol && !/[^\p{L}\p{Nd}\s]/u.test(password)) broken.push("a symbol")
  return broken
}

/** `Password must have: a digit, a symbol.` */
export const describeBroken = (broken: ReadonlyArray<string>) => `Password must have ${broken.join(", ")}.`

export class PasswordPolicies extends Context.Service<PasswordPolicies, {
  readonly get: (tenantId: string) => Effect.Effect<PasswordPolicy, SqlError>
  readonly put: (tenantId: string, policy: PasswordPolicy) => Effect.Effect<PasswordPolicy, SqlError>
}>()("@agent-platform/server/SecurityPolicies/PasswordPolicies") {
  static readonly layer = Layer.effect(
    PasswordPolicies,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const get = (tenantId: string) =>
        Effect.map(
          sql<PasswordPolicy>`
            SELECT min_length, require_uppercase, require_lowercase, require_digit, require_symbol,
                   max_age_days, lockout_threshold, lockout_minutes
            FROM password_policies WHERE tenant_id = ${tenantId}`,
          (rows) => rows[0] ?? defaultPolicy
        )
      const put = (tenantId: string, policy: PasswordPolicy) =>
        Effect.as(
          sql`
            INSERT INTO password_policies ${sql.insert({ tenant_id: tenantId, ...policy })}
            ON CONFLICT (tenant_id) DO UPDATE SET
              min_length = EXCLUDED.min_length, require_uppercase = EXCLUDED.require_uppercase,
              require_lowercase = EXCLUDED.require_lowercase, require_digit = EXCLUDED.require_digit,
              require_symbol = EXCLUDED.require_symbol, max_age_days = EXCLUDED.max_age_days,
              lockout_threshold = EXCLUDED.lockout_threshold, lockout_minutes = EXCLUDED.lockout_minutes,
              updated_at = now()`,
          policy
        )
      return PasswordPolicies.of({ get, put })
    })
  )
}
