/**
 * Users as administrators manage them: creation under the tenant's password
 * policy, listing, and changes of role and state. A role change, a
 * deactivation or a block ends the user's sessions at once. Every change is
 * appended to the admin audit chain.
 */
import { type Admin, Errors, type Role, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { authorizeGrant } from "../Access/Roles.ts"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { Passwords } from "../Identity/Passwords.ts"
import { VerifiedKeys } from "../Keys/VerifiedKeys.ts"
import { brokenRules, describeBroken, PasswordPolicies } from "../SecurityPolicies/PasswordPolicies.ts"
import { type UserChanges, type UserRow, UsersRepo } from "./UsersRepo.ts"

export const toAdminUser = (row: UserRow): Admin.AdminUser => ({
  id: row.id,
  email: row.email,
  nombre: row.nombre,
  role_id: row.role_id,
  active: row.active,
  blocked: row.blocked,
  locked_until: row.locked_until !== null && row.locked_until.getTime() > Date.now()
    ? row.locked_until.toISOString()
    : null,
  must_change_password: row.must_change_password,
  mfa_enabled: row.mfa_enabled,
  created_at: row.created_at.toISOString(),
  last_login_at: row.last_login_at?.toISOString() ?? null
})

export interface CreateUserInput {
  readonly email: string
  readonly nombre: string
  readonly password: string
  readonly role_id: Role
}

export class Users extends Context.Service<Users, {
  /** Creates a user in the actor's tenant, with a role the actor may grant (403 otherwise). */
  readonly create: (
    actor: UserPrincipal,
    input: CreateUserInput
  ) => Effect.Effect<Admin.AdminUser, Errors.InvalidRequest | Errors.Conflict | Errors.AccessDenied | SqlError>
  /** Creates a user in a tenant other than the actor's (a new tenant's first admin). */
  readonly createIn: (
    tenantId: string,
    actor: string,
    input: CreateUserInput
  ) => Effect.Effect<Admin.AdminUser, Errors.InvalidRequest | Errors.Conflict | SqlError>
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<Admin.AdminUser>, SqlError>
  /** Changes a user the actor may manage, to a role the actor may grant (403 otherwise). */
  readonly update: (
    actor: UserPrincipal,
    id: string,
    changes: UserChanges
  ) => Effect.Effect<Admin.AdminUser, Errors.NotFound | Errors.InvalidRequest | Errors.AccessDenied | SqlError>
}>()("@agent-platform/server/Users/Users") {
  static readonly layer = Layer.effect(
    Users,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* UsersRepo
      const passwords = yield* Passwords
      const policies = yield* PasswordPolicies
      const sessions = yield* Sessions
      const audit = yield* AuditLog
      const verifiedKeys = yield* VerifiedKeys

      const createIn = Effect.fn("Users.createIn")(function*(tenantId: string, actor: string, input: CreateUserInput) {
        const broken = brokenRules(yield* policies.get(tenantId), input.password)
        if (broken.length > 0) return yield* new Errors.InvalidRequest({ error: describeBroken(broken) })
        const passwordHash = yield* passwords.hash(input.password)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* repo.insert({
            tenantId,
            email: input.email,
            nombre: input.nombre,
            passwordHash,
            roleId: input.role_id
          })
          if (row === undefined) return undefined
          yield* audit.append("admin_audit_log", {
            tenantId,
            event: "user.created",
            actor,
            target: `user:${row.id}`,
            data: { email: row.email, role_id: row.role_id }
          })
          return row
        }))
        if (row === undefined) {
          return yield* new Errors.Conflict({ error: `A user with email ${input.email} already exists.` })
        }
        return toAdminUser(row)
      })

      const update = Effect.fn("Users.update")(function*(actor: UserPrincipal, id: string, changes: UserChanges) {
        if (
          id === actor.userId &&
          (changes.active === false || changes.blocked === true ||
            (changes.role_id !== undefined && changes.role_id !== actor.roleId))
        ) {
          return yield* new Errors.InvalidRequest({
            error: "You cannot deactivate, block or change the role of your own account; ask another administrator."
          })
        }
        yield* authorizeGrant(actor, { role: changes.role_id })
        // A change of role or state also decides whether the user's API keys work: every replica drops them before this answers.
        const row = yield* verifiedKeys.evicting(
          { _tag: "All" },
          (evictKeys) =>
            sql.withTransaction(Effect.gen(function*() {
              const before = yield* repo.findById(actor.tenantId, id)
              if (before === undefined) return undefined
              yield* authorizeGrant(actor, { current: before.role_id })
              const row = yield* repo.update(actor.tenantId, id, changes)
              if (row === undefined) return undefined
              const endsSessions = (changes.role_id !== undefined && changes.role_id !== before.role_id) ||
                changes.active === false || changes.blocked === true
              if (endsSessions) yield* sessions.revokeAllOfUser(row.id)
              if (
                row.role_id !== before.role_id || row.active !== before.active || row.blocked !== before.blocked
              ) yield* evictKeys
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "user.updated",
                actor: `user:${actor.userId}`,
                target: `user:${row.id}`,
                data: { changes: { ...changes }, sessions_ended: endsSessions }
              })
              return row
            }))
        )
        if (row === undefined) return yield* new Errors.NotFound({ error: `User ${id} not found.` })
        return toAdminUser(row)
      })

      return Users.of({
        create: (actor, input) =>
          Effect.andThen(
            authorizeGrant(actor, { role: input.role_id }),
            createIn(actor.tenantId, `user:${actor.userId}`, input)
          ),
        createIn,
        list: (tenantId) => Effect.map(repo.list(tenantId), (rows) => rows.map(toAdminUser)),
        update
      })
    })
  )
}
