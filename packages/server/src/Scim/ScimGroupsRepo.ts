/** SCIM groups and their members, scoped to a tenant. */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { isUuid } from "../Platform/Ids.ts"
import type { ScimGroupRow } from "./ScimResources.ts"
import type { ListQuery } from "./ScimUsersRepo.ts"

export interface GroupWrite {
  readonly displayName: string
  readonly externalId: string | null
}

export class ScimGroupsRepo extends Context.Service<ScimGroupsRepo, {
  readonly list: (
    query: ListQuery & { readonly members: boolean }
  ) => Effect.Effect<{ readonly total: number; readonly rows: ReadonlyArray<ScimGroupRow> }, SqlError>
  readonly find: (
    tenantId: string,
    id: string,
    options?: { readonly lock?: boolean; readonly members?: boolean }
  ) => Effect.Effect<ScimGroupRow | undefined, SqlError>
  /** Fails on a displayName taken in the tenant. */
  readonly insert: (tenantId: string, group: GroupWrite) => Effect.Effect<string, SqlError>
  readonly update: (tenantId: string, id: string, group: GroupWrite) => Effect.Effect<void, SqlError>
  /** Marks the group changed (its members changed). */
  readonly touch: (id: string) => Effect.Effect<void, SqlError>
  readonly remove: (tenantId: string, id: string) => Effect.Effect<void, SqlError>
  readonly memberIds: (id: string) => Effect.Effect<ReadonlyArray<string>, SqlError>
  readonly addMembers: (tenantId: string, id: string, userIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError>
  readonly removeMembers: (id: string, userIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Scim/ScimGroupsRepo") {
  static readonly layer = Layer.effect(
    ScimGroupsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = (members: boolean) =>
        sql.literal(`g.id, g.display_name, g.external_id, g.created_at, g.updated_at,
          (SELECT md5(string_agg(d.user_id::text, ',' ORDER BY d.user_id)) FROM scim_group_members d WHERE d.group_id = g.id) AS members_digest${
          members
            ? `, COALESCE((
                SELECT jsonb_agg(jsonb_build_object('value', m.user_id, 'display', mu.nombre) ORDER BY mu.nombre, m.user_id)
                FROM scim_group_members m JOIN users mu ON mu.id = m.user_id WHERE m.group_id = g.id
              ), '[]'::jsonb) AS members`
            : ""
        }`)
      return ScimGroupsRepo.of({
        list: (query) =>
          Effect.gen(function*() {
            const where = query.where === undefined ? sql`true` : query.where
            const [{ total }] = yield* sql<{ total: string | number }>`
              SELECT count(*) AS total FROM scim_groups g WHERE g.tenant_id = ${query.tenantId} AND ${where}`
            if (query.limit === 0) return { total: Number(total), rows: [] }
            const order = query.orderBy === undefined
              ? sql`g.created_at, g.id`
              : sql`${query.orderBy.expr} ${
                sql.literal(query.orderBy.descending ? "DESC NULLS LAST" : "ASC NULLS LAST")
              }, g.created_at, g.id`
            const rows = yield* sql<ScimGroupRow>`
              SELECT ${columns(query.members)} FROM scim_groups g WHERE g.tenant_id = ${query.tenantId} AND ${where}
              ORDER BY ${order} LIMIT ${query.limit} OFFSET ${query.offset}`
            return { total: Number(total), rows }
          }),
        find: (tenantId, id, options = {}) =>
          isUuid(id)
            ? Effect.map(
              sql<ScimGroupRow>`
                SELECT ${
                columns(options.members ?? true)
              } FROM scim_groups g WHERE g.tenant_id = ${tenantId} AND g.id = ${id}
                ${sql.literal(options.lock === true ? "FOR UPDATE OF g" : "")}`,
              (rows) => rows[0]
            )
            : Effect.succeed(undefined),
        insert: (tenantId, group) =>
          Effect.map(
            sql<{ id: string }>`
              INSERT INTO scim_groups (tenant_id, display_name, external_id)
              VALUES (${tenantId}, ${group.displayName}, ${group.externalId}) RETURNING id`,
            (rows) => rows[0].id
          ),
        update: (tenantId, id, group) =>
          Effect.asVoid(sql`
            UPDATE scim_groups SET display_name = ${group.displayName}, external_id = ${group.externalId}, updated_at = now()
            WHERE tenant_id = ${tenantId} AND id = ${id}`),
        touch: (id) => Effect.asVoid(sql`UPDATE scim_groups SET updated_at = now() WHERE id = ${id}`),
        remove: (tenantId, id) =>
          Effect.asVoid(sql`DELETE FROM scim_groups WHERE tenant_id = ${tenantId} AND id = ${id}`),
        memberIds: (id) =>
          Effect.map(
            sql<{ user_id: string }>`SELECT user_id FROM scim_group_members WHERE group_id = ${id}`,
            (rows) => rows.map((row) => row.user_id)
          ),
        addMembers: (tenantId, id, userIds) =>
          userIds.length === 0
            ? Effect.void
            : Effect.asVoid(sql`
              INSERT INTO scim_group_members ${
              sql.insert(
                userIds.map((userId) => ({
                  group_id: id,
                  user_id: userId,
                  tenant_id: tenantId
                })) as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>]
              )
            }
              ON CONFLICT DO NOTHING`),
        removeMembers: (id, userIds) =>
          userIds.length === 0
            ? Effect.void
            : Effect.asVoid(
              sql`DELETE FROM scim_group_members WHERE group_id = ${id} AND ${sql.in("user_id", userIds)}`
            )
      })
    })
  )
}
