/** The tenant's group-to-role mappings, and the roles they give SCIM-provisioned users. */
import type { Role, Scim } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** Strongest first: a user in several mapped groups gets the first of these. */
export const rolePrecedence: ReadonlyArray<Role> = ["r_admin", "r_security_officer", "r_space_admin", "r_user"]

export interface RoleChange {
  readonly id: string
  readonly from: Role
  readonly to: Role
}

export class ScimRoleMappingsRepo extends Context.Service<ScimRoleMappingsRepo, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<Scim.RoleMapping>, SqlError>
  readonly replace: (tenantId: string, mappings: ReadonlyArray<Scim.RoleMapping>) => Effect.Effect<void, SqlError>
  /**
   * Sets the role of SCIM-provisioned users (all of the tenant's, or those of
   * `userIds`) to what their groups map to, r_user without a mapped group;
   * answers the users whose role changed.
   */
  readonly apply: (
    tenantId: string,
    userIds: ReadonlyArray<string> | "all"
  ) => Effect.Effect<ReadonlyArray<RoleChange>, SqlError>
}>()("@agent-platform/server/Scim/ScimRoleMappingsRepo") {
  static readonly layer = Layer.effect(
    ScimRoleMappingsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return ScimRoleMappingsRepo.of({
        list: (tenantId) =>
          sql<Scim.RoleMapping>`
            SELECT group_display_name, role_id FROM scim_role_mappings WHERE tenant_id = ${tenantId} ORDER BY position`,
        replace: (tenantId, mappings) =>
          Effect.gen(function*() {
            yield* sql`DELETE FROM scim_role_mappings WHERE tenant_id = ${tenantId}`
            if (mappings.length === 0) return
            yield* sql`INSERT INTO scim_role_mappings ${
              sql.insert(
                mappings.map((mapping, position) => ({
                  tenant_id: tenantId,
                  ...mapping,
                  position
                })) as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>]
              )
            }`
          }),
        apply: (tenantId, userIds) => {
          if (userIds !== "all" && userIds.length === 0) return Effect.succeed([])
          const scope = userIds === "all" ? sql`true` : sql.in("u.id", userIds)
          return Effect.map(
            sql<{ id: string; from_role: Role; to_role: Role }>`
              WITH target AS (
                SELECT u.id, u.role_id AS from_role, COALESCE((
                  SELECT m.role_id
                  FROM scim_group_members gm
                  JOIN scim_groups g ON g.id = gm.group_id
                  JOIN scim_role_mappings m ON m.tenant_id = g.tenant_id AND lower(m.group_display_name) = lower(g.display_name)
                  WHERE gm.user_id = u.id
                  ORDER BY array_position(${
              sql.literal(`ARRAY[${rolePrecedence.map((role) => `'${role}'`).join(", ")}]::text[]`)
            }, m.role_id)
                  LIMIT 1
                ), 'r_user') AS to_role
                FROM users u
                WHERE u.tenant_id = ${tenantId} AND u.scim_managed AND ${scope}
              )
              UPDATE users u SET role_id = target.to_role
              FROM target WHERE u.id = target.id AND target.from_role <> target.to_role
              RETURNING u.id, target.from_role, target.to_role`,
            (rows) => rows.map((row) => ({ id: row.id, from: row.from_role, to: row.to_role }))
          )
        }
      })
    })
  )
}
