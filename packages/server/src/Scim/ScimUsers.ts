/**
 * SCIM Users (RFC 7644 §3.3-3.6): the tenant's users, the same rows as the
 * admin surface. Deactivation (`active: false`, by PUT or PATCH) and
 * deletion end the user's sessions at once; sign-in then answers 403 until
 * the user is active again. Passwords follow the tenant's policy. Every
 * change is appended to the admin audit chain as the calling key.
 *
 * A key acts with its owner's authority: it changes (replaces, patches,
 * deletes) only the users its owner could change on the admin surface —
 * the role model's `mayGrant`, as `authorizeGrant` applies it there — so an
 * r_admin's SCIM key cannot take over an r_superadmin's account (403).
 */
import { isAdmin, mayGrant, Scim, ScimSchemas } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { Passwords } from "../Identity/Passwords.ts"
import { brokenRules, describeBroken, PasswordPolicies } from "../SecurityPolicies/PasswordPolicies.ts"
import { UsersRepo } from "../Users/UsersRepo.ts"
import { attempt, type NormalizedResource, normalizeResource, project, type Projection } from "./ScimAttributes.ts"
import { userFields } from "./ScimFields.ts"
import { uniqueness } from "./ScimListing.ts"
import { applyOperations, passwordOf, readOperations } from "./ScimPatch.ts"
import { patchableUser, type ScimUserRow, userResource, userWrite } from "./ScimResources.ts"
import {
  checkIfMatch,
  foundOrNotFound,
  listPage,
  type ScimCaller,
  type ScimResourceService
} from "./ScimResourceService.ts"
import { ScimUsersRepo } from "./ScimUsersRepo.ts"

const extensions = [ScimSchemas.EnterpriseUserSchema]
const patchTarget = { schema: ScimSchemas.UserSchema, extensions, readOnly: ["id", "meta", "groups", "schemas"] }

const projected = (resource: Scim.ScimUser, projection: Projection) =>
  project(resource, projection, ScimSchemas.UserSchema, extensions)

const conflictMessage = (userName: string, email: string) => (constraint: string) =>
  constraint === "users_tenant_email_key"
    ? `The email ${email} is already the sign-in email of another user.`
    : `The userName ${userName} is already taken in this tenant.`

/** The top-level attributes whose values differ, for the audit entry (never their values: they may be personal). */
const changedAttributes = (before: Record<string, unknown>, after: Record<string, unknown>) => {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  keys.delete("meta")
  return [...keys].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key])).sort()
}

/**
 * SCIM Users; a deletion can also be refused (400 mutability) to keep an
 * active administrator, and any change (403) when the key's owner may not
 * change the user.
 */
export class ScimUsers extends Context.Service<
  ScimUsers,
  ScimResourceService<Scim.ScimUser, Scim.ScimBadRequest | Scim.ScimForbidden, Scim.ScimForbidden>
>()(
  "@agent-platform/server/Scim/ScimUsers"
) {
  static readonly layer = Layer.effect(
    ScimUsers,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ScimUsersRepo
      const users = yield* UsersRepo
      const passwords = yield* Passwords
      const policies = yield* PasswordPolicies
      const sessions = yield* Sessions
      const audit = yield* AuditLog
      const fields = userFields(sql)

      const normalize = (body: Record<string, unknown>) =>
        Effect.suspend(() => {
          const result = attempt(() => normalizeResource(ScimSchemas.UserSchema, extensions, body))
          return result.ok ? Effect.succeed(result.value) : Effect.fail(result.error)
        })

      /** Checks a password against the tenant's policy and hashes it (before any transaction: hashing takes a while). */
      const hashPassword = (tenantId: string, password: string | undefined) =>
        Effect.gen(function*() {
          if (password === undefined) return undefined
          const broken = brokenRules(yield* policies.get(tenantId), password)
          if (broken.length > 0) return yield* Scim.ScimBadRequest.of("invalidValue", describeBroken(broken))
          return yield* passwords.hash(password)
        })

      const found = (caller: ScimCaller, id: string, lock = false) =>
        foundOrNotFound("User", id, repo.find(caller.tenantId, id, lock))

      const answer = (caller: ScimCaller, id: string, projection: Projection) =>
        Effect.map(found(caller, id), (row) => {
          const resource = userResource(row, caller.baseUrl)
          return { resource: projected(resource, projection), version: resource.meta!.version }
        })

      /** Refuses (403) a change to a user whose role the key's owner could not grant. */
      const mayChange = (caller: ScimCaller, row: ScimUserRow) =>
        mayGrant(caller.ownerRole, row.role_id) ? Effect.void : Effect.fail(
          Scim.ScimForbidden.of(
            `This key's owner (${caller.ownerRole}) cannot change ${
              row.scim_user_name ?? row.email
            }, who holds ${row.role_id}: use a key of a user who can grant that role.`
          )
        )

      /**
       * Refuses to leave the tenant without an active administrator, or the
       * key without its owner: a key stops with its owner, so the SCIM
       * integration would stop itself (400 mutability).
       */
      const keepAnAdmin = (caller: ScimCaller, row: ScimUserRow, what: string) =>
        Effect.gen(function*() {
          if (row.id === caller.ownerId) {
            return yield* Scim.ScimBadRequest.of(
              "mutability",
              `${
                row.scim_user_name ?? row.email
              } owns this SCIM key and cannot be ${what} through it: the key would stop with them. Create the SCIM token as another administrator (pnpm cli scim token create), switch the identity provider to it, then retry.`
            )
          }
          if (!row.active || row.blocked || !isAdmin(row.role_id)) return
          if ((yield* repo.otherActiveAdmins(caller.tenantId, row.id)) > 0) return
          return yield* Scim.ScimBadRequest.of(
            "mutability",
            `${
              row.scim_user_name ?? row.email
            } is the tenant's last active administrator and cannot be ${what}: make another user an administrator first.`
          )
        })

      /**
       * A replacement of a user's state, computed from the locked current
       * resource: If-Match, the write itself, sessions, the audit entry.
       */
      const write = (
        caller: ScimCaller,
        id: string,
        ifMatch: string | undefined,
        operation: "replace" | "patch",
        passwordHash: string | undefined,
        next: (current: Scim.ScimUser) => Effect.Effect<NormalizedResource, Scim.ScimBadRequest>
      ) =>
        sql.withTransaction(Effect.gen(function*() {
          const row = yield* found(caller, id, true)
          yield* mayChange(caller, row)
          const current = userResource(row, caller.baseUrl)
          yield* checkIfMatch("User", id, ifMatch, current.meta!.version)
          const normalized = yield* next(current)
          const user = userWrite(normalized, row.email)
          if (user instanceof Scim.ScimBadRequest) return yield* user
          const deactivated = row.active && !user.active
          if (deactivated) yield* keepAnAdmin(caller, row, "deactivated")
          yield* uniqueness(repo.update(caller.tenantId, id, user), conflictMessage(user.userName, user.email))
          if (passwordHash !== undefined) yield* users.setPassword(id, passwordHash)
          const sessionsEnded = deactivated || passwordHash !== undefined
          if (sessionsEnded) yield* sessions.revokeAllOfUser(id)
          const after = userResource(yield* found(caller, id), caller.baseUrl)
          yield* audit.append("admin_audit_log", {
            tenantId: caller.tenantId,
            event: deactivated
              ? "scim.user.deactivated"
              : !row.active && user.active
              ? "scim.user.reactivated"
              : "scim.user.updated",
            actor: `key:${caller.keyId}`,
            target: `user:${id}`,
            data: {
              operation,
              changed: [...changedAttributes(current, after), ...(passwordHash === undefined ? [] : ["password"])],
              active: user.active,
              sessions_ended: sessionsEnded
            }
          })
          return after
        }))

      const create = Effect.fn("ScimUsers.create")(
        function*(caller: ScimCaller, body: Record<string, unknown>, projection: Projection) {
          const normalized = yield* normalize(body)
          const user = userWrite(normalized)
          if (user instanceof Scim.ScimBadRequest) return yield* user
          const password = normalized.attributes.password as string | undefined
          const hash = yield* hashPassword(caller.tenantId, password)
          const id = yield* uniqueness(
            sql.withTransaction(Effect.gen(function*() {
              const id = yield* repo.insert(caller.tenantId, user, hash ?? null)
              yield* audit.append("admin_audit_log", {
                tenantId: caller.tenantId,
                event: "scim.user.created",
                actor: `key:${caller.keyId}`,
                target: `user:${id}`,
                data: { active: user.active, has_password: hash !== undefined, role_id: "r_user" }
              })
              return id
            })),
            conflictMessage(user.userName, user.email)
          )
          // The user was just created: not finding it is a defect, not a 404.
          return yield* answer(caller, id, projection).pipe(Effect.catchTag("ScimNotFound", Effect.die))
        }
      )

      const replace = Effect.fn("ScimUsers.replace")(function*(
        caller: ScimCaller,
        id: string,
        body: Record<string, unknown>,
        ifMatch: string | undefined,
        projection: Projection
      ) {
        yield* found(caller, id)
        const normalized = yield* normalize(body)
        const hash = yield* hashPassword(caller.tenantId, normalized.attributes.password as string | undefined)
        const after = yield* write(caller, id, ifMatch, "replace", hash, () => Effect.succeed(normalized))
        return { resource: projected(after, projection), version: after.meta!.version }
      })

      const patch = Effect.fn("ScimUsers.patch")(function*(
        caller: ScimCaller,
        id: string,
        body: Record<string, unknown>,
        ifMatch: string | undefined,
        projection: Projection
      ) {
        const before = userResource(yield* found(caller, id), caller.baseUrl)
        const operations = readOperations(patchTarget, body, before)
        if (operations instanceof Scim.ScimBadRequest) return yield* operations
        const hash = yield* hashPassword(caller.tenantId, passwordOf(operations))
        const after = yield* write(caller, id, ifMatch, "patch", hash, (current) =>
          Effect.gen(function*() {
            const patched = applyOperations(patchableUser(current), operations)
            if (patched instanceof Scim.ScimBadRequest) return yield* patched
            const { password: _password, ...rest } = patched
            return yield* normalize(rest)
          }))
        return { resource: projected(after, projection), version: after.meta!.version }
      })

      const remove = Effect.fn("ScimUsers.remove")(
        function*(caller: ScimCaller, id: string, ifMatch: string | undefined) {
          yield* sql.withTransaction(Effect.gen(function*() {
            const row = yield* found(caller, id, true)
            yield* mayChange(caller, row)
            yield* checkIfMatch("User", id, ifMatch, userResource(row, caller.baseUrl).meta!.version)
            yield* keepAnAdmin(caller, row, "deleted")
            // Sessions and memberships go with the row (ON DELETE CASCADE): the user is signed out at once.
            yield* repo.remove(caller.tenantId, id)
            yield* audit.append("admin_audit_log", {
              tenantId: caller.tenantId,
              event: "scim.user.deleted",
              actor: `key:${caller.keyId}`,
              target: `user:${id}`,
              data: { groups_left: row.scim_groups.length, sessions_ended: true }
            })
          }))
        }
      )

      return ScimUsers.of({
        list: (caller, params) =>
          listPage(
            sql,
            fields,
            params,
            (page) => repo.list({ tenantId: caller.tenantId, ...page }),
            (row) => projected(userResource(row, caller.baseUrl), params)
          ),
        get: answer,
        create,
        replace,
        patch,
        remove
      })
    })
  )
}
