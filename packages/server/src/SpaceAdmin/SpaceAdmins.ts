/**
 * Space Admin assignments: a user who administers the agents of some spaces
 * only. Assigning makes an r_user an r_space_admin (administrators keep
 * their role; a Security Officer is refused with 409, since a user holds one
 * role); assigning twice changes nothing.
 */
import { Errors, type Role, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { authorizeGrant } from "../Access/Roles.ts"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { isUuid } from "../Platform/Ids.ts"

export interface AssignmentRow {
  readonly id: string
  readonly user_id: string
  readonly space_id: string
  readonly space_code: string
  readonly created_at: Date
}

/**
 * Why a Space Admin may not use a space, and what follows (`consequence`):
 * the refusal's words, true whether they administer other spaces or none yet.
 */
export const notSpaceAdminOf = (spaceId: string, theirSpaces: ReadonlyArray<string>, consequence: string) =>
  theirSpaces.length === 0
    ? `You are not Space Admin of any space yet (an administrator assigns spaces with POST /api/space-admin/assignments): ${consequence}.`
    : `You are Space Admin of ${
      theirSpaces.length === 1 ? "another space" : "other spaces"
    }, not of ${spaceId}: ${consequence}.`

const toAssignment = (row: AssignmentRow) => ({ ...row, created_at: row.created_at.toISOString() })

export class SpaceAdmins extends Context.Service<SpaceAdmins, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<ReturnType<typeof toAssignment>>, SqlError>
  readonly assign: (
    actor: UserPrincipal,
    input: { readonly user_id: string; readonly space_id: string }
  ) => Effect.Effect<
    ReturnType<typeof toAssignment>,
    Errors.NotFound | Errors.AccessDenied | Errors.Conflict | SqlError
  >
  /** The spaces a user administers as Space Admin. */
  readonly spacesOf: (tenantId: string, userId: string) => Effect.Effect<ReadonlyArray<string>, SqlError>
}>()("@agent-platform/server/SpaceAdmin/SpaceAdmins") {
  static readonly layer = Layer.effect(
    SpaceAdmins,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const audit = yield* AuditLog
      const sessions = yield* Sessions
      const select = (tenantId: string) =>
        sql<AssignmentRow>`
        SELECT a.id, a.user_id, a.space_id, s.code AS space_code, a.created_at
        FROM space_admin_assignments a JOIN spaces s ON s.id = a.space_id
        WHERE a.tenant_id = ${tenantId}`
      return SpaceAdmins.of({
        list: (tenantId) => Effect.map(select(tenantId), (rows) => rows.map(toAssignment)),
        assign: (actor, input) =>
          Effect.gen(function*() {
            if (!isUuid(input.user_id)) return yield* new Errors.NotFound({ error: `User ${input.user_id} not found.` })
            if (!isUuid(input.space_id)) {
              return yield* new Errors.NotFound({ error: `Space ${input.space_id} not found.` })
            }
            const row = yield* sql.withTransaction(Effect.gen(function*() {
              // Locked until the assignment commits: a role change or a deletion of the user waits for it (and
              // is not overwritten by it), and the space stays while it is assigned.
              const users = yield* sql<{ role_id: Role }>`
                SELECT role_id FROM users WHERE tenant_id = ${actor.tenantId} AND id = ${input.user_id} FOR UPDATE`
              if (users.length === 0) return yield* new Errors.NotFound({ error: `User ${input.user_id} not found.` })
              const spaces = yield* sql`
                SELECT id FROM spaces WHERE tenant_id = ${actor.tenantId} AND id = ${input.space_id} FOR KEY SHARE`
              if (spaces.length === 0) {
                return yield* new Errors.NotFound({ error: `Space ${input.space_id} not found.` })
              }
              if (users[0].role_id === "r_security_officer") {
                // A user holds one role: making a Security Officer Space Admin would take the audit role away.
                return yield* new Errors.Conflict({
                  error:
                    `User ${input.user_id} is a Security Officer, and a user holds one role: to make them Space Admin, change their role to r_space_admin first (PATCH /api/admin/users/${input.user_id}), then assign the space.`
                })
              }
              yield* sql`
                INSERT INTO space_admin_assignments (tenant_id, user_id, space_id)
                VALUES (${actor.tenantId}, ${input.user_id}, ${input.space_id})
                ON CONFLICT (user_id, space_id) DO NOTHING`
              if (users[0].role_id === "r_user") {
                yield* authorizeGrant(actor, { role: "r_space_admin", current: "r_user" })
                yield* sql`UPDATE users SET role_id = 'r_space_admin', updated_at = now() WHERE id = ${input.user_id}`
                // A role change ends the user's sessions.
                yield* sessions.revokeAllOfUser(input.user_id)
              }
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "space_admin.assigned",
                actor: `user:${actor.userId}`,
                target: `user:${input.user_id}`,
                data: { space_id: input.space_id }
              })
              const rows = yield* sql<AssignmentRow>`
                SELECT a.id, a.user_id, a.space_id, s.code AS space_code, a.created_at
                FROM space_admin_assignments a JOIN spaces s ON s.id = a.space_id
                WHERE a.user_id = ${input.user_id} AND a.space_id = ${input.space_id}`
              return rows[0]
            }))
            return toAssignment(row)
          }),
        spacesOf: (tenantId, userId) =>
          Effect.map(
            sql<
              { space_id: string }
            >`SELECT space_id FROM space_admin_assignments WHERE tenant_id = ${tenantId} AND user_id = ${userId}`,
            (rows) => rows.map((row) => row.space_id)
          )
      })
    })
  )
}
