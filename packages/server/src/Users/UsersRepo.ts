/** The users table: the rows every identity feature reads and writes. */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Role } from "@agent-platform/domain"
import { isUuid } from "../Platform/Ids.ts"

export interface UserRow {
  readonly id: string
  readonly tenant_id: string
  readonly email: string
  readonly nombre: string
  readonly password_hash: string | null
  readonly role_id: Role
  readonly active: boolean
  readonly blocked: boolean
  readonly must_change_password: boolean
  readonly password_changed_at: Date
  readonly failed_logins: number
  readonly locked_until: Date | null
  readonly mfa_enabled: boolean
  readonly mfa_secret: string | null
  readonly mfa_pending_secret: string | null
  readonly mfa_last_step: string | number | null
  readonly is_service_account: boolean
  readonly avatar_url: string | null
  readonly created_at: Date
  readonly last_login_at: Date | null
}

export interface NewUser {
  readonly tenantId: string
  readonly email: string
  readonly nombre: string
  readonly passwordHash: string | null
  readonly roleId: Role
  readonly mustChangePassword?: boolean
}

export interface UserChanges {
  readonly role_id?: Role
  readonly active?: boolean
  readonly blocked?: boolean
  readonly must_change_password?: boolean
}

export class UsersRepo extends Context.Service<UsersRepo, {
  /** By email across tenants: login names no tenant. */
  readonly findByEmail: (email: string) => Effect.Effect<UserRow | undefined, SqlError>
  readonly findById: (tenantId: string, id: string) => Effect.Effect<UserRow | undefined, SqlError>
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<UserRow>, SqlError>
  /** Undefined when the email is taken. */
  readonly insert: (user: NewUser) => Effect.Effect<UserRow | undefined, SqlError>
  readonly update: (tenantId: string, id: string, changes: UserChanges) => Effect.Effect<UserRow | undefined, SqlError>
  readonly setPassword: (id: string, passwordHash: string) => Effect.Effect<void, SqlError>
  readonly recordFailedLogin: (id: string, threshold: number, lockoutMinutes: number) => Effect.Effect<UserRow, SqlError>
  readonly recordLogin: (id: string) => Effect.Effect<void, SqlError>
  readonly setMfa: (id: string, fields: {
    readonly mfa_pending_secret?: string | null
    readonly mfa_secret?: string | null
    readonly mfa_enabled?: boolean
    readonly mfa_last_step?: number | null
  }) => Effect.Effect<void, SqlError>
  /** Records an accepted TOTP step; false when it (or a later one) was already used: no replay. */
  readonly claimTotpStep: (id: string, step: number) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/Users/UsersRepo") {
  static readonly layer = Layer.effect(
    UsersRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const first = <A>(rows: ReadonlyArray<A>) => rows[0]
      return UsersRepo.of({
        findByEmail: (email) =>
          Effect.map(sql<UserRow>`SELECT * FROM users WHERE lower(email) = ${email.toLowerCase()}`, first),
        findById: (tenantId, id) =>
          isUuid(id)
            ? Effect.map(sql<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`, first)
            : Effect.succeed(undefined),
        list: (tenantId) => sql<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} ORDER BY created_at, email`,
        insert: (user) =>
          Effect.map(
            sql<UserRow>`
              INSERT INTO users (tenant_id, email, nombre, password_hash, role_id, must_change_password)
              VALUES (${user.tenantId}, ${user.email.toLowerCase()}, ${user.nombre}, ${user.passwordHash}, ${user.roleId},
                      ${user.mustChangePassword ?? false})
              ON CONFLICT DO NOTHING
              RETURNING *`,
            first
          ),
        update: (tenantId, id, changes) => {
          if (!isUuid(id)) return Effect.succeed(undefined)
          const entries = Object.entries(changes).filter(([, value]) => value !== undefined)
          if (entries.length === 0) {
            return Effect.map(sql<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`, first)
          }
          const set = Object.fromEntries(entries)
          // Unblocking also clears a lockout.
          const unlock = changes.blocked === false ? sql`, failed_logins = 0, locked_until = NULL` : sql``
          return Effect.map(
            sql<UserRow>`
              UPDATE users SET ${sql.update(set)}, updated_at = now() ${unlock}
              WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING *`,
            first
          )
        },
        setPassword: (id, passwordHash) =>
          Effect.asVoid(sql`
            UPDATE users SET password_hash = ${passwordHash}, password_changed_at = now(),
              must_change_password = false, failed_logins = 0, locked_until = NULL, updated_at = now()
            WHERE id = ${id}`),
        recordFailedLogin: (id, threshold, lockoutMinutes) =>
          Effect.map(
            sql<UserRow>`
              UPDATE users SET
                failed_logins = failed_logins + 1,
                locked_until = CASE WHEN failed_logins + 1 > ${threshold}
                  THEN now() + make_interval(mins => ${lockoutMinutes}) ELSE locked_until END
              WHERE id = ${id} RETURNING *`,
            (rows) => rows[0]
          ),
        recordLogin: (id) =>
          Effect.asVoid(sql`UPDATE users SET failed_logins = 0, locked_until = NULL, last_login_at = now() WHERE id = ${id}`),
        setMfa: (id, fields) => Effect.asVoid(sql`UPDATE users SET ${sql.update(fields)}, updated_at = now() WHERE id = ${id}`),
        claimTotpStep: (id, step) =>
          Effect.map(
            sql<{ id: string }>`
              UPDATE users SET mfa_last_step = ${step}
              WHERE id = ${id} AND (mfa_last_step IS NULL OR mfa_last_step < ${step}) RETURNING id`,
            (rows) => rows.length === 1
          )
      })
    })
  )
}
