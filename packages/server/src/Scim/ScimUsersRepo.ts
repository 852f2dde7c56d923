/**
 * The SCIM view of the `users` table: the same rows as the admin surface,
 * with their SCIM attributes and groups. Every query is scoped to a tenant.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { isUuid } from "../Platform/Ids.ts"
import type { ScimUserRow, UserWrite } from "./ScimResources.ts"

export interface ListQuery {
  readonly tenantId: string
  readonly where: Statement.Fragment | undefined
  readonly orderBy: { readonly expr: Statement.Fragment; readonly descending: boolean } | undefined
  readonly offset: number
  readonly limit: number
}

export class ScimUsersRepo extends Context.Service<ScimUsersRepo, {
  readonly list: (
    query: ListQuery
  ) => Effect.Effect<{ readonly total: number; readonly rows: ReadonlyArray<ScimUserRow> }, SqlError>
  /** A user of the tenant; `lock` holds the row until the transaction ends. */
  readonly find: (tenantId: string, id: string, lock?: boolean) => Effect.Effect<ScimUserRow | undefined, SqlError>
  /** Inserts a user provisioned through SCIM (role r_user until role mappings say otherwise); fails on a taken userName or email. */
  readonly insert: (tenantId: string, user: UserWrite, passwordHash: string | null) => Effect.Effect<string, SqlError>
  readonly update: (tenantId: string, id: string, user: UserWrite) => Effect.Effect<void, SqlError>
  readonly remove: (tenantId: string, id: string) => Effect.Effect<void, SqlError>
  /** Active administrators of the tenant other than `exceptId`, locked until the transaction ends. */
  readonly otherActiveAdmins: (tenantId: string, exceptId: string) => Effect.Effect<number, SqlError>
  /** The ids among `ids` that are users of the tenant. */
  readonly existing: (tenantId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, SqlError>
}>()("@agent-platform/server/Scim/ScimUsersRepo") {
  static readonly layer = Layer.effect(
    ScimUsersRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql.literal(`
        u.id, u.email, u.nombre, u.role_id, u.active, u.blocked, u.external_id, u.given_name, u.family_name,
        u.scim_user_name, u.scim_attributes, u.scim_managed, u.created_at, u.updated_at,
        COALESCE((
          SELECT jsonb_agg(jsonb_build_object('value', g.id, 'display', g.display_name) ORDER BY g.display_name, g.id)
          FROM scim_group_members gm JOIN scim_groups g ON g.id = gm.group_id WHERE gm.user_id = u.id
        ), '[]'::jsonb) AS scim_groups`)
      const attributes = (user: UserWrite) => JSON.stringify(user.attributes)

      return ScimUsersRepo.of({
        list: (query) =>
          Effect.gen(function*() {
            const where = query.where === undefined ? sql`true` : query.where
            const [{ total }] = yield* sql<{ total: string | number }>`
              SELECT count(*) AS total FROM users u WHERE u.tenant_id = ${query.tenantId} AND ${where}`
            if (query.limit === 0) return { total: Number(total), rows: [] }
            const order = query.orderBy === undefined
              ? sql`u.created_at, u.id`
              : sql`${query.orderBy.expr} ${
                sql.literal(query.orderBy.descending ? "DESC NULLS LAST" : "ASC NULLS LAST")
              }, u.created_at, u.id`
            const rows = yield* sql<ScimUserRow>`
              SELECT ${columns} FROM users u WHERE u.tenant_id = ${query.tenantId} AND ${where}
              ORDER BY ${order} LIMIT ${query.limit} OFFSET ${query.offset}`
            return { total: Number(total), rows }
          }),
        find: (tenantId, id, lock = false) =>
          isUuid(id)
            ? Effect.map(
              sql<ScimUserRow>`SELECT ${columns} FROM users u WHERE u.tenant_id = ${tenantId} AND u.id = ${id} ${
                sql.literal(lock ? "FOR UPDATE OF u" : "")
              }`,
              (rows) => rows[0]
            )
            : Effect.succeed(undefined),
        insert: (tenantId, user, passwordHash) =>
          Effect.map(
            sql<{ id: string }>`
              INSERT INTO users (tenant_id, email, nombre, password_hash, role_id, active, external_id, given_name, family_name,
                                 scim_user_name, scim_attributes, scim_managed)
              VALUES (${tenantId}, ${user.email.toLowerCase()}, ${user.nombre}, ${passwordHash}, 'r_user', ${user.active},
                      ${user.externalId}, ${user.givenName}, ${user.familyName}, ${user.userName}, ${
              attributes(user)
            }::jsonb, true)
              RETURNING id`,
            (rows) => rows[0].id
          ),
        update: (tenantId, id, user) =>
          Effect.asVoid(sql`
            UPDATE users SET email = ${user.email.toLowerCase()}, nombre = ${user.nombre}, active = ${user.active},
              external_id = ${user.externalId}, given_name = ${user.givenName}, family_name = ${user.familyName},
              scim_user_name = ${user.userName}, scim_attributes = ${attributes(user)}::jsonb, updated_at = now()
            WHERE tenant_id = ${tenantId} AND id = ${id}`),
        remove: (tenantId, id) => Effect.asVoid(sql`DELETE FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`),
        otherActiveAdmins: (tenantId, exceptId) =>
          Effect.map(
            sql<{ id: string }>`
              SELECT id FROM users
              WHERE tenant_id = ${tenantId} AND id <> ${exceptId} AND active AND NOT blocked AND role_id IN ('r_admin', 'r_superadmin')
              FOR UPDATE`,
            (rows) => rows.length
          ),
        existing: (tenantId, ids) => {
          const candidates = ids.filter(isUuid)
          if (candidates.length === 0) return Effect.succeed(new Set<string>())
          return Effect.map(
            sql<{ id: string }>`SELECT id FROM users WHERE tenant_id = ${tenantId} AND ${sql.in("id", candidates)}`,
            (rows) => new Set(rows.map((row) => row.id))
          )
        }
      })
    })
  )
}
