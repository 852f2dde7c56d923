/**
 * First start on an empty database: create the bootstrap tenant (the platform
 * tenant: its r_superadmin alone creates other tenants) and its first user, a
 * superadmin. Later starts change nothing.
 *
 * The superadmin's password is `BOOTSTRAP_ADMIN_PASSWORD`, which must meet the
 * password policy a new tenant starts with, or one generated here.
 */
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { randomInt } from "node:crypto"
import { Passwords } from "../Identity/Passwords.ts"
import { ServerConfig, type ServerConfigShape } from "../Platform/Config.ts"
import { brokenRules, defaultPolicy, describeBroken } from "../SecurityPolicies/PasswordPolicies.ts"

/** Letters and digits that cannot be mistaken for one another when read off a terminal (no 0/O, 1/l/I). */
const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
const generatedLength = 20

/**
 * A password for the bootstrap superadmin: 20 characters drawn uniformly
 * (CSPRNG, no modulo bias) from a 57-character alphabet, every position
 * random (about 117 bits), drawn again until it meets the default policy.
 */
export const generateAdminPassword = (): string => {
  for (;;) {
    const password = Array.from({ length: generatedLength }, () => passwordAlphabet[randomInt(passwordAlphabet.length)])
      .join("")
    if (brokenRules(defaultPolicy, password).length === 0) return password
  }
}

/** `BOOTSTRAP_ADMIN_PASSWORD` breaks the password policy a new tenant starts with. */
export class BootstrapPasswordRejected extends Schema.TaggedError<BootstrapPasswordRejected>()(
  "BootstrapPasswordRejected",
  { message: Schema.String }
) {}

/**
 * The line to stop the start with when `BOOTSTRAP_ADMIN_PASSWORD` is set and
 * breaks the default password policy; undefined when it is unset or complies.
 */
export const bootstrapPasswordProblem = (
  config: Pick<ServerConfigShape, "bootstrapAdminPassword">
): string | undefined => {
  if (Option.isNone(config.bootstrapAdminPassword)) return undefined
  const broken = brokenRules(defaultPolicy, Redacted.value(config.bootstrapAdminPassword.value))
  return broken.length === 0
    ? undefined
    : `Invalid configuration: BOOTSTRAP_ADMIN_PASSWORD breaks the password policy: ${
      describeBroken(broken)
    } Unset it to have one generated.`
}

/** What the bootstrap did, for the start-up banner. */
export interface BootstrapResult {
  readonly created: boolean
  readonly email: string
  /** Set only when the password was generated (and must be shown once). */
  readonly generatedPassword: string | undefined
}

export const bootstrap = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* ServerConfig
  const passwords = yield* Passwords
  const problem = bootstrapPasswordProblem(config)
  if (problem !== undefined) return yield* new BootstrapPasswordRejected({ message: problem })
  const given = Option.map(config.bootstrapAdminPassword, Redacted.value)
  const email = config.bootstrapAdminEmail.toLowerCase()
  const tenantCount = sql<{ n: number }>`SELECT count(*)::int AS n FROM tenants`
  if ((yield* tenantCount)[0].n > 0) return { created: false, email, generatedPassword: undefined }
  const password = Option.getOrElse(given, generateAdminPassword)
  const passwordHash = yield* passwords.hash(password)
  const created = yield* sql.withTransaction(Effect.gen(function*() {
    // Replicas starting together: one of them bootstraps, the others wait and see it done.
    yield* sql`SELECT pg_advisory_xact_lock(4242001)`
    if ((yield* tenantCount)[0].n > 0) return false
    const [tenant] = yield* sql<{ id: string }>`
      INSERT INTO tenants (name, is_platform) VALUES (${config.bootstrapTenant}, true) RETURNING id`
    yield* sql`
      INSERT INTO users (tenant_id, email, nombre, password_hash, role_id)
      VALUES (${tenant.id}, ${email}, 'Administrator', ${passwordHash}, 'r_superadmin')`
    return true
  }))
  return {
    created,
    email,
    generatedPassword: created && Option.isNone(given) ? password : undefined
  } satisfies BootstrapResult
})

/** Prints the credentials once, on the start that created them. */
export const BootstrapLive = Layer.effectDiscard(Effect.gen(function*() {
  const result = yield* bootstrap
  if (!result.created) return
  const config = yield* ServerConfig
  const lines = [
    `Created tenant "${config.bootstrapTenant}" and its superadmin ${result.email}.`,
    result.generatedPassword === undefined
      ? "Its password is BOOTSTRAP_ADMIN_PASSWORD."
      : `Generated password (shown once, store it now): ${result.generatedPassword}`
  ]
  yield* Effect.sync(() => console.log(lines.join("\n")))
}))
