/** The users table: the rows every identity feature reads and writes. */
import type { Role } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
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
  /**
   * The users with this email, across tenants (login names no tenant; an email
   * is unique within a tenant only), or in the tenant named (by name or id).
   */
  readonly findByEmail: (email: string, tenant?: string | undefined) => Effect.Effect<ReadonlyArray<UserRow>, SqlError>
  readonly findById: (tenantId: string, id: string) => Effect.Effect<UserRow | undefined, SqlError>
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<UserRow>, SqlError>
  /** Undefined when the email is taken. */
  readonly insert: (user: NewUser) => Effect.Effect<UserRow | undefined, SqlError>
  readonly update: (tenantId: string, id: string, changes: UserChanges) => Effect.Effect<UserRow | undefined, SqlError>
  readonly setPassword: (id: string, passwordHash: string) => Effect.Effect<void, SqlError>
  /**
   * Replaces the password only if it is still `currentHash` (the one the
   * caller verified): false when another change came first.
   */
  readonly replacePassword: (id: string, currentHash: string, passwordHash: string) => Effect.Effect<boolean, SqlError>
  /**
   * Claims one sign-in attempt before the password is checked: the attempt
   * counts as pending until it is released or recorded as failed, and no more
   * than `threshold + 1` attempts may be failed or pending at once, so however
   * many run together, at most `threshold + 1` passwords are checked before
   * the account locks. `Busy` when every attempt is pending (try again soon),
   * `Locked` during a lockout. An expired lockout starts the count afresh;
   * pending claims lapse after 30 s (a crashed process must not lock anyone).
   */
  readonly claimAttempt: (id: string, threshold: number) => Effect.Effect<
    { readonly _tag: "Claimed"; readonly attempt: number } | { readonly _tag: "Busy" } | { readonly _tag: "Locked" },
    SqlError
  >
  /** A claimed attempt's password was right: it is no longer pending (the count stays until the sign-in completes). */
  readonly releaseAttempt: (id: string) => Effect.Effect<void, SqlError>
  /**
   * A failure (a claimed attempt's wrong password, or a wrong TOTP code):
   * the one past the threshold locks the account; true when it did.
   */
  readonly recordFailedLogin: (id: string, failure: {
    readonly claimed: boolean
    readonly threshold: number
    readonly lockoutMinutes: number
  }) => Effect.Effect<{ readonly failures: number; readonly locked: boolean }, SqlError>
  readonly recordLogin: (id: string) => Effect.Effect<void, SqlError>
  /** The password (and code) were right: the failure count starts afresh. */
  readonly clearFailedLogins: (id: string) => Effect.Effect<void, SqlError>
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
        findByEmail: (email, tenant) =>
          tenant === undefined
            ? sql<UserRow>`SELECT * FROM users WHERE lower(email) = ${email.toLowerCase()} ORDER BY created_at, id`
            : sql<UserRow>`
              SELECT u.* FROM users u JOIN tenants t ON t.id = u.tenant_id
              WHERE lower(u.email) = ${email.toLowerCase()} AND (t.id::text = ${tenant} OR lower(t.name) = ${tenant.toLowerCase()})
              ORDER BY u.created_at, u.id`,
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
        replacePassword: (id, currentHash, passwordHash) =>
          Effect.map(
            sql`
              UPDATE users SET password_hash = ${passwordHash}, password_changed_at = now(),
                must_change_password = false, failed_logins = 0, locked_until = NULL, updated_at = now()
              WHERE id = ${id} AND password_hash = ${currentHash}
              RETURNING id`,
            (rows) => rows.length > 0
          ),
        claimAttempt: (id, threshold) =>
          Effect.gen(function*() {
            const expired = sql`(locked_until IS NOT NULL AND locked_until <= now())`
            const pending =
              sql`(CASE WHEN pending_logins_until IS NULL OR pending_logins_until < now() THEN 0 ELSE pending_logins END)`
            const failed = sql`(CASE WHEN ${expired} THEN 0 ELSE failed_logins END)`
            const claimed = yield* sql<{ attempt: number }>`
              UPDATE users SET
                failed_logins = ${failed},
                locked_until = CASE WHEN ${expired} THEN NULL ELSE locked_until END,
                pending_logins = ${pending} + 1,
                pending_logins_until = now() + interval '30 seconds'
              WHERE id = ${id} AND (locked_until IS NULL OR ${expired}) AND ${failed} + ${pending} <= ${threshold}
              RETURNING failed_logins + pending_logins AS attempt`
            if (claimed.length === 1) return { _tag: "Claimed", attempt: claimed[0].attempt } as const
            const [row] = yield* sql<
              { locked: boolean }
            >`SELECT COALESCE(locked_until > now(), false) AS locked FROM users WHERE id = ${id}`
            return row?.locked === true ? { _tag: "Locked" } as const : { _tag: "Busy" } as const
          }),
        releaseAttempt: (id) =>
          Effect.asVoid(sql`UPDATE users SET pending_logins = GREATEST(pending_logins - 1, 0) WHERE id = ${id}`),
        recordFailedLogin: (id, failure) =>
          Effect.map(
            sql<{ failures: number; locked: boolean }>`
              UPDATE users SET
                pending_logins = ${failure.claimed ? sql`GREATEST(pending_logins - 1, 0)` : sql`pending_logins`},
                failed_logins = failed_logins + 1,
                locked_until = CASE WHEN failed_logins + 1 > ${failure.threshold}
                  THEN now() + make_interval(mins => ${failure.lockoutMinutes}) ELSE locked_until END
              WHERE id = ${id}
              RETURNING failed_logins AS failures, locked_until IS NOT NULL AS locked`,
            (rows) => rows[0] ?? { failures: 0, locked: false }
          ),
        recordLogin: (id) =>
          Effect.asVoid(
            sql`UPDATE users SET failed_logins = 0, locked_until = NULL, last_login_at = now() WHERE id = ${id}`
          ),
        clearFailedLogins: (id) =>
          Effect.asVoid(sql`UPDATE users SET failed_logins = 0 WHERE id = ${id} AND failed_logins <> 0`),
        setMfa: (id, fields) =>
          Effect.asVoid(sql`UPDATE users SET ${sql.update(fields)}, updated_at = now() WHERE id = ${id}`),
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
