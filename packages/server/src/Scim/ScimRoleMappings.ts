/**
 * Roles from identity-provider groups: the admin's mappings (group
 * displayName → role) decide the role of every user provisioned through
 * SCIM, recomputed on every membership change and whenever the mappings
 * change. A user whose role changes has their sessions ended, like a role
 * change on the admin surface, and the change is in the admin audit chain.
 */
import { Errors, type Scim, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { ScimRoleMappingsRepo } from "./ScimRoleMappingsRepo.ts"

export class ScimRoleMappings extends Context.Service<ScimRoleMappings, {
  readonly get: (tenantId: string) => Effect.Effect<Scim.RoleMappings, SqlError>
  readonly put: (
    actor: UserPrincipal,
    input: Scim.RoleMappings
  ) => Effect.Effect<Scim.RoleMappings, Errors.InvalidRequest | SqlError>
  /** Recomputes the roles of these users (in the caller's transaction); `actor` is who changed their memberships. */
  readonly applyTo: (tenantId: string, actor: string, userIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Scim/ScimRoleMappings") {
  static readonly layer = Layer.effect(
    ScimRoleMappings,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ScimRoleMappingsRepo
      const sessions = yield* Sessions
      const audit = yield* AuditLog

      const apply = (tenantId: string, actor: string, userIds: ReadonlyArray<string> | "all") =>
        Effect.gen(function*() {
          const changes = yield* repo.apply(tenantId, userIds)
          for (const change of changes) {
            yield* sessions.revokeAllOfUser(change.id)
            yield* audit.append("admin_audit_log", {
              tenantId,
              event: "scim.user.role_changed",
              actor,
              target: `user:${change.id}`,
              data: { from: change.from, to: change.to, sessions_ended: true }
            })
          }
        })

      const put = Effect.fn("ScimRoleMappings.put")(function*(actor: UserPrincipal, input: Scim.RoleMappings) {
        if (input.mappings.some((mapping) => mapping.role_id === "r_superadmin")) {
          return yield* new Errors.InvalidRequest({
            error:
              "r_superadmin cannot be granted through SCIM: map groups to r_admin, r_security_officer, r_space_admin or r_user."
          })
        }
        const seen = new Set<string>()
        for (const mapping of input.mappings) {
          const key = mapping.group_display_name.toLowerCase()
          if (seen.has(key)) {
            return yield* new Errors.InvalidRequest({
              error: `The group "${mapping.group_display_name}" is mapped twice: map each group to one role.`
            })
          }
          seen.add(key)
        }
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* repo.replace(actor.tenantId, input.mappings)
          yield* audit.append("admin_audit_log", {
            tenantId: actor.tenantId,
            event: "scim.role_mappings.updated",
            actor: `user:${actor.userId}`,
            data: { mappings: input.mappings }
          })
          yield* apply(actor.tenantId, `user:${actor.userId}`, "all")
        }))
        return { mappings: yield* repo.list(actor.tenantId) }
      })

      return ScimRoleMappings.of({
        get: (tenantId) => Effect.map(repo.list(tenantId), (mappings) => ({ mappings })),
        put,
        applyTo: (tenantId, actor, userIds) => apply(tenantId, actor, userIds)
      })
    })
  ).pipe(Layer.provide(ScimRoleMappingsRepo.layer))
}
