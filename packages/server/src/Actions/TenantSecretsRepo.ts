/**
 * The SQL of tenant secrets (`tenant_secrets`): values referenced by action
 * headers as `{{secret:NAME}}`, stored only as ciphertext. Every query
 * filters by the tenant of the caller's principal.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface SecretRow {
  readonly name: string
  readonly updated_at: Date
}

export class TenantSecretsRepo extends Context.Service<TenantSecretsRepo, {
  /** Names and last changes, never ciphertexts. */
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<SecretRow>, SqlError>
  readonly upsert: (tenantId: string, name: string, ciphertext: string) => Effect.Effect<SecretRow, SqlError>
  readonly remove: (tenantId: string, name: string) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/Actions/TenantSecretsRepo") {
  static readonly layer = Layer.effect(
    TenantSecretsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return TenantSecretsRepo.of({
        list: (tenantId) =>
          sql<SecretRow>`SELECT name, updated_at FROM tenant_secrets WHERE tenant_id = ${tenantId} ORDER BY name`,
        upsert: (tenantId, name, ciphertext) =>
          Effect.map(
            sql<SecretRow>`
              INSERT INTO tenant_secrets (tenant_id, name, ciphertext) VALUES (${tenantId}, ${name}, ${ciphertext})
              ON CONFLICT (tenant_id, name) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, updated_at = now()
              RETURNING name, updated_at`,
            (rows) => rows[0]
          ),
        remove: (tenantId, name) =>
          Effect.map(
            sql`DELETE FROM tenant_secrets WHERE tenant_id = ${tenantId} AND name = ${name} RETURNING name`,
            (rows) => rows.length > 0
          )
      })
    })
  )
}
