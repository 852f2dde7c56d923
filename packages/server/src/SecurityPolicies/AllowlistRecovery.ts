/**
 * The operator's way back into a tenant whose IP allowlist shuts everyone
 * out: delete all of the tenant's rules, straight in the database (no
 * session needed), and record it in the tenant's admin audit chain. The
 * `agent-platform security reset-allowlist --tenant <name or id>` command
 * runs it against `DATABASE_URL`, or the embedded database in `DATA_DIR`
 * (stop the service first: the embedded database admits one process).
 */
import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { DatabaseLive, MigrationsLive } from "../Platform/Database.ts"

/** No tenant has that name or id. */
export class TenantNotFound extends Schema.TaggedError<TenantNotFound>()("TenantNotFound", {
  message: Schema.String
}) {}

/** What a reset removed. */
export interface AllowlistReset {
  readonly tenant: { readonly id: string; readonly name: string }
  readonly removed: ReadonlyArray<string>
}

/** Deletes every allowlist rule of the tenant named `tenant` (its name, any case, or its id). */
export const resetAllowlist = (tenant: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [found] = yield* sql<{ id: string; name: string }>`
        SELECT id, name FROM tenants WHERE id::text = ${tenant} OR lower(name) = ${tenant.toLowerCase()}
        ORDER BY created_at LIMIT 1`
      if (found === undefined) {
        return yield* new TenantNotFound({ message: `No tenant named ${tenant} (give its name or id).` })
      }
      const removed = yield* sql<
        { cidr: string }
      >`DELETE FROM ip_allowlist WHERE tenant_id = ${found.id} RETURNING cidr`
      yield* audit.append("admin_audit_log", {
        tenantId: found.id,
        event: "ip_allowlist.reset",
        actor: "operator:cli",
        target: `tenant:${found.id}`,
        data: { removed: removed.map((row) => row.cidr) }
      })
      return { tenant: found, removed: removed.map((row) => row.cidr) } satisfies AllowlistReset
    }))
  })

/** The configured database (DATABASE_URL, or the embedded one in DATA_DIR), migrated, and its audit chains. */
export const OperatorDatabaseLive = AuditLog.layer.pipe(
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(DatabaseLive),
  Layer.provide(ServerConfig.layer)
)
