/** The api_keys table. Keys are stored only as SHA-256 hashes. */
import type { Role } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { isUuid } from "../Platform/Ids.ts"

export interface KeyRow {
  readonly id: string
  readonly tenant_id: string
  readonly name: string
  readonly key_prefix: string
  readonly key_hash: string
  readonly scopes: ReadonlyArray<string>
  readonly space_id: string | null
  readonly rate_limit_rpm: number
  readonly is_active: boolean
  readonly created_by: string | null
  readonly created_at: Date
  readonly last_used_at: Date | null
}

/** An active key with the state of its owner (null fields when the owner is gone). */
export interface VerifiableKeyRow extends KeyRow {
  readonly owner_role: Role | null
  readonly owner_active: boolean | null
  readonly owner_blocked: boolean | null
}

export class KeysRepo extends Context.Service<KeysRepo, {
  readonly insert: (key: {
    readonly tenantId: string
    readonly name: string
    readonly prefix: string
    readonly hash: string
    readonly scopes: ReadonlyArray<string>
    readonly spaceId: string | null
    readonly rateLimitRpm: number
    readonly createdBy: string
  }) => Effect.Effect<KeyRow, SqlError>
  /** The tenant's keys, or only those `ownerId` created. */
  readonly list: (tenantId: string, ownerId: string | undefined) => Effect.Effect<ReadonlyArray<KeyRow>, SqlError>
  /** The active keys with these hashes (those that exist), each with its owner's state: one statement. */
  readonly findActiveByHashes: (
    hashes: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<VerifiableKeyRow>, SqlError>
  /** Marks a key revoked; undefined when it is not the tenant's (or, with `ownerId`, not that user's). */
  readonly revoke: (
    tenantId: string,
    id: string,
    ownerId: string | undefined
  ) => Effect.Effect<KeyRow | undefined, SqlError>
  /** The hash of a key of the tenant (of `ownerId`'s keys when given), for evicting it. */
  readonly hashOf: (
    tenantId: string,
    id: string,
    ownerId: string | undefined
  ) => Effect.Effect<string | undefined, SqlError>
  /** Writes a batch of last-use times in one statement. */
  readonly touch: (lastUsed: ReadonlyArray<readonly [keyId: string, at: Date]>) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Keys/KeysRepo") {
  static readonly layer = Layer.effect(
    KeysRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return KeysRepo.of({
        insert: (key) =>
          Effect.map(
            sql<KeyRow>`
              INSERT INTO api_keys (tenant_id, name, key_prefix, key_hash, scopes, space_id, rate_limit_rpm, created_by)
              VALUES (${key.tenantId}, ${key.name}, ${key.prefix}, ${key.hash}, ${key.scopes}::text[],
                      ${key.spaceId}, ${key.rateLimitRpm}, ${key.createdBy})
              RETURNING *`,
            (rows) => rows[0]
          ),
        list: (tenantId, ownerId) =>
          ownerId === undefined
            ? sql<KeyRow>`SELECT * FROM api_keys WHERE tenant_id = ${tenantId} ORDER BY created_at DESC`
            : sql<
              KeyRow
            >`SELECT * FROM api_keys WHERE tenant_id = ${tenantId} AND created_by = ${ownerId} ORDER BY created_at DESC`,
        findActiveByHashes: (hashes) =>
          sql<VerifiableKeyRow>`
            SELECT k.*, u.role_id AS owner_role, u.active AS owner_active, u.blocked AS owner_blocked
            FROM api_keys k LEFT JOIN users u ON u.id = k.created_by
            WHERE k.key_hash = ANY(${hashes}::text[]) AND k.is_active`,
        revoke: (tenantId, id, ownerId) =>
          isUuid(id)
            ? Effect.map(
              sql<KeyRow>`
                UPDATE api_keys SET is_active = false, revoked_at = COALESCE(revoked_at, now())
                WHERE tenant_id = ${tenantId} AND id = ${id}
                  AND ${ownerId === undefined ? sql`true` : sql`created_by = ${ownerId}`}
                RETURNING *`,
              (rows) => rows[0]
            )
            : Effect.succeed(undefined),
        hashOf: (tenantId, id, ownerId) =>
          isUuid(id)
            ? Effect.map(
              sql<{ key_hash: string }>`
                SELECT key_hash FROM api_keys WHERE tenant_id = ${tenantId} AND id = ${id}
                  AND ${ownerId === undefined ? sql`true` : sql`created_by = ${ownerId}`}`,
              (rows) => rows[0]?.key_hash
            )
            : Effect.succeed(undefined),
        touch: (lastUsed) =>
          lastUsed.length === 0
            ? Effect.void
            : Effect.asVoid(sql`
              UPDATE api_keys SET last_used_at = GREATEST(COALESCE(api_keys.last_used_at, u.at), u.at)
              FROM (SELECT unnest(${lastUsed.map(([id]) => id)}::uuid[]) AS id,
                           unnest(${lastUsed.map(([, at]) => at)}::timestamptz[]) AS at) AS u
              WHERE api_keys.id = u.id`)
      })
    })
  )
}
