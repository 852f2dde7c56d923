/**
 * First start on an empty database: create the bootstrap tenant and its first
 * user, a superadmin. Later starts change nothing.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { generatePassword, Passwords } from "../Identity/Passwords.ts"
import { ServerConfig } from "../Platform/Config.ts"

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
  const given = Option.map(config.bootstrapAdminPassword, Redacted.value)
  const email = config.bootstrapAdminEmail.toLowerCase()
  const tenantCount = sql<{ n: number }>`SELECT count(*)::int AS n FROM tenants`
  if ((yield* tenantCount)[0].n > 0) return { created: false, email, generatedPassword: undefined }
  const password = Option.getOrElse(given, generatePassword)
  const passwordHash = yield* passwords.hash(password)
  const created = yield* sql.withTransaction(Effect.gen(function*() {
    // Replicas starting together: one of them bootstraps, the others wait and see it done.
    yield* sql`SELECT pg_advisory_xact_lock(4242001)`
    if ((yield* tenantCount)[0].n > 0) return false
    const [tenant] = yield* sql<{ id: string }>`
      INSERT INTO tenants (name) VALUES (${config.bootstrapTenant}) RETURNING id`
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
