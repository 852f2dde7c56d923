/** Tenants, their spaces and feature flags, as administrators manage them. */
import { type Admin, Errors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Users } from "../Users/Users.ts"

const flagColumns = [
  "feature_war_rooms",
  "feature_compliance_pack",
  "feature_decision_records",
  "push_notifications"
] as const

export class Tenants extends Context.Service<Tenants, {
  readonly createSpace: (
    actor: UserPrincipal,
    input: { readonly code: string; readonly name: string }
  ) => Effect.Effect<typeof Admin.Space.Type, Errors.Conflict | SqlError>
  readonly listSpaces: (tenantId: string) => Effect.Effect<ReadonlyArray<typeof Admin.Space.Type>, SqlError>
  readonly flags: (tenantId: string) => Effect.Effect<Admin.TenantFlags, SqlError>
  readonly setFlags: (
    actor: UserPrincipal,
    changes: typeof Admin.UpdateTenantFlags.Type
  ) => Effect.Effect<Admin.TenantFlags, SqlError>
  readonly createTenant: (
    actor: UserPrincipal,
    input: typeof Admin.CreateTenant.Type
  ) => Effect.Effect<typeof Admin.Tenant.Type, Errors.Conflict | Errors.InvalidRequest | SqlError>
}>()("@agent-platform/server/Tenants/Tenants") {
  static readonly layer = Layer.effect(
    Tenants,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const audit = yield* AuditLog
      const users = yield* Users

      const flags = (tenantId: string) =>
        Effect.map(
          sql<Admin.TenantFlags>`
            SELECT feature_war_rooms, feature_compliance_pack, feature_decision_records, push_notifications
            FROM tenants WHERE id = ${tenantId}`,
          (rows) => rows[0]
        )

      return Tenants.of({
        createSpace: (actor, input) =>
          Effect.gen(function*() {
            const rows = yield* sql.withTransaction(Effect.gen(function*() {
              const rows = yield* sql<{ id: string; code: string; name: string }>`
                INSERT INTO spaces (tenant_id, code, name) VALUES (${actor.tenantId}, ${input.code}, ${input.name})
                ON CONFLICT (tenant_id, code) DO NOTHING RETURNING id, code, name`
              if (rows.length === 1) {
                yield* audit.append("admin_audit_log", {
                  tenantId: actor.tenantId,
                  event: "space.created",
                  actor: `user:${actor.userId}`,
                  target: `space:${rows[0].id}`,
                  data: { code: input.code, name: input.name }
                })
              }
              return rows
            }))
            if (rows.length === 0) {
              return yield* new Errors.Conflict({ error: `A space with code ${input.code} already exists.` })
            }
            return rows[0]
          }),
        listSpaces: (tenantId) =>
          sql<{ id: string; code: string; name: string }>`
            SELECT id, code, name FROM spaces WHERE tenant_id = ${tenantId} ORDER BY created_at, code`,
        flags,
        setFlags: (actor, changes) =>
          sql.withTransaction(Effect.gen(function*() {
            const set = Object.fromEntries(
              flagColumns.flatMap((column) => changes[column] === undefined ? [] : [[column, changes[column]]])
            )
            if (Object.keys(set).length > 0) {
              yield* sql`UPDATE tenants SET ${sql.update(set)} WHERE id = ${actor.tenantId}`
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "tenant.flags_updated",
                actor: `user:${actor.userId}`,
                target: `tenant:${actor.tenantId}`,
                data: set
              })
            }
            return yield* flags(actor.tenantId)
          })),
        createTenant: (actor, input) =>
          Effect.gen(function*() {
            const created = yield* sql.withTransaction(Effect.gen(function*() {
              const rows = yield* sql<{ id: string; name: string }>`
                INSERT INTO tenants (name) VALUES (${input.name}) ON CONFLICT DO NOTHING RETURNING id, name`
              if (rows.length === 0) {
                return yield* new Errors.Conflict({ error: `A tenant named ${input.name} already exists.` })
              }
              const tenant = rows[0]
              yield* users.createIn(tenant.id, `user:${actor.userId}`, {
                email: input.admin_email,
                nombre: "Administrator",
                password: input.admin_password,
                role_id: "r_admin"
              })
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "tenant.created",
                actor: `user:${actor.userId}`,
                target: `tenant:${tenant.id}`,
                data: { name: tenant.name, admin_email: input.admin_email.toLowerCase() }
              })
              return tenant
            }))
            return created
          })
      })
    })
  )
}
