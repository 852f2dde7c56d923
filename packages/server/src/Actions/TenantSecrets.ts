/**
 * Tenant secrets for action headers (`/api/admin/secrets`, admin): set,
 * list by name, delete. Values are encrypted before they reach the database
 * (AES-256-GCM, Platform/Encryption) and never leave the server again except
 * in the header of the action call that references them; the audit chain
 * records that a secret changed, never its value.
 */
import { type ActionAdmin, Errors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Encryption } from "../Platform/Encryption.ts"
import { type SecretRow, TenantSecretsRepo } from "./TenantSecretsRepo.ts"

type SecretInfo = typeof ActionAdmin.SecretInfo.Type

const toInfo = (row: SecretRow): SecretInfo => ({ name: row.name, updated_at: row.updated_at.toISOString() })

export class TenantSecrets extends Context.Service<TenantSecrets, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<SecretInfo>>
  /** Creates or replaces the secret. */
  readonly put: (admin: UserPrincipal, name: string, value: string) => Effect.Effect<SecretInfo>
  readonly remove: (
    admin: UserPrincipal,
    name: string
  ) => Effect.Effect<{ readonly success: true; readonly message: string }, Errors.NotFound>
}>()("@agent-platform/server/Actions/TenantSecrets") {
  static readonly layer = Layer.effect(
    TenantSecrets,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* TenantSecretsRepo
      const audit = yield* AuditLog
      const encryption = yield* Encryption

      const audited = (admin: UserPrincipal, event: string, name: string) =>
        audit.append("admin_audit_log", {
          tenantId: admin.tenantId,
          event,
          actor: `user:${admin.userId}`,
          target: `tenant_secret:${name}`
        })

      const list = (tenantId: string) => Effect.orDie(Effect.map(repo.list(tenantId), (rows) => rows.map(toInfo)))

      const put = Effect.fn("TenantSecrets.put")(function*(admin: UserPrincipal, name: string, value: string) {
        const row = yield* Effect.gen(function*() {
          const row = yield* repo.upsert(admin.tenantId, name, encryption.encrypt(value))
          yield* audited(admin, "tenant_secret.set", name)
          return row
        }).pipe(sql.withTransaction, Effect.orDie)
        return toInfo(row)
      })

      const remove = Effect.fn("TenantSecrets.remove")(function*(admin: UserPrincipal, name: string) {
        const removed = yield* Effect.gen(function*() {
          const removed = yield* repo.remove(admin.tenantId, name)
          if (removed) yield* audited(admin, "tenant_secret.deleted", name)
          return removed
        }).pipe(sql.withTransaction, Effect.orDie)
        if (!removed) return yield* new Errors.NotFound({ error: `tenant secret ${name} not found` })
        return {
          success: true as const,
          message: `tenant secret ${name} deleted; actions referencing it fail until it is set again`
        }
      })

      return TenantSecrets.of({ list, put, remove })
    })
  ).pipe(Layer.provide(TenantSecretsRepo.layer))
}
