/**
 * The two append-only audit hash chains of every tenant: `audit_logs`
 * (security events: logins, failures, key creation and revocation, action
 * executions) and `admin_audit_log` (every administrative change). Each row
 * stores SHA-256(previous hash + canonical JSON of the row); a changed,
 * removed or inserted row breaks every hash after it.
 */
import type { Audit } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { createHash } from "node:crypto"
import { canonicalJson } from "./CanonicalJson.ts"

export type Chain = "audit_logs" | "admin_audit_log"

export interface AuditEntry {
  readonly tenantId: string
  /** What happened, e.g. `auth.login`, `key.revoked`, `action.executed`. */
  readonly event: string
  /** Who did it: `user:<id>`, `key:<id>` or `system`. */
  readonly actor: string
  /** What it was done to, e.g. `key:<id>`. */
  readonly target?: string | null | undefined
  readonly data?: Record<string, unknown> | undefined
  readonly ip?: string | null | undefined
}

/** How many rows one verification query reads: memory stays flat however long the chain. */
export const verifyBatchSize = 2000

/** The hash of the chain before its first row. */
export const genesisHash = "0".repeat(64)

export interface StoredRow {
  readonly id: string
  readonly tenant_id: string
  readonly seq: string | number | bigint
  readonly event: string
  readonly actor: string
  readonly target: string | null
  readonly data: unknown
  readonly ip: string | null
  readonly created_at: Date
  readonly prev_hash: string
  readonly hash: string
}

/** The hash of a row: SHA-256 of the previous hash and the canonical JSON of every column but the hashes. */
export const entryHash = (prevHash: string, row: Omit<StoredRow, "hash" | "prev_hash">) =>
  createHash("sha256")
    .update(prevHash)
    .update(canonicalJson({
      id: row.id,
      tenant_id: row.tenant_id,
      seq: Number(row.seq),
      event: row.event,
      actor: row.actor,
      target: row.target,
      data: row.data,
      ip: row.ip,
      created_at: row.created_at.toISOString()
    }))
    .digest("hex")

/** A stable 32-bit key per chain and tenant for the transaction-scoped advisory lock. */
const lockKey = (chain: Chain, tenantId: string) => {
  const digest = createHash("sha256").update(`${chain}:${tenantId}`).digest()
  return digest.readInt32BE(0)
}

export class AuditLog extends Context.Service<AuditLog, {
  /**
   * Appends an entry. Runs in the caller's transaction when there is one, so
   * the entry commits (or rolls back) with the change it records. Appends to
   * one chain are serialized by a transaction-scoped lock: the chain never forks.
   */
  readonly append: (chain: Chain, entry: AuditEntry) => Effect.Effect<void, SqlError>
  /**
   * Re-hashes the tenant's chain from its first row, in batches of
   * `verifyBatchSize` (constant memory). A row is invalid when its hash does
   * not match its content, its `prev_hash` is not the hash of the row before
   * it, or its `seq` is not the next: an altered payload, a deleted row (the
   * row after it is named) and a reordered row are all found. The one
   * verifier of GET /api/audit/verify, GET /api/compliance/integrity and
   * `agent-platform audit verify`.
   */
  readonly verify: (chain: Chain, tenantId: string) => Effect.Effect<Audit.ChainIntegrity, SqlError>
}>()("@agent-platform/server/Audit/AuditLog") {
  static readonly layer = Layer.effect(
    AuditLog,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const append = (chain: Chain, entry: AuditEntry) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${lockKey(chain, entry.tenantId)})`
          const last = yield* sql<{ seq: string | number; hash: string }>`
            SELECT seq, hash FROM ${sql(chain)} WHERE tenant_id = ${entry.tenantId} ORDER BY seq DESC LIMIT 1`
          const row = {
            id: crypto.randomUUID(),
            tenant_id: entry.tenantId,
            seq: last.length === 0 ? 1 : Number(last[0].seq) + 1,
            event: entry.event,
            actor: entry.actor,
            target: entry.target ?? null,
            data: entry.data ?? {},
            ip: entry.ip ?? null,
            created_at: new Date()
          }
          const prevHash = last.length === 0 ? genesisHash : last[0].hash
          const hash = entryHash(prevHash, row)
          yield* sql`
            INSERT INTO ${sql(chain)} (id, tenant_id, seq, event, actor, target, data, ip, created_at, prev_hash, hash)
            VALUES (${row.id}, ${row.tenant_id}, ${row.seq}, ${row.event}, ${row.actor}, ${row.target},
                    ${JSON.stringify(row.data)}::jsonb, ${row.ip}, ${row.created_at}, ${prevHash}, ${hash})`
        }))

      const verify = (chain: Chain, tenantId: string) =>
        Effect.gen(function*() {
          let checked = 0
          let invalid = 0
          let firstInvalid: string | null = null
          let prevHash = genesisHash
          let afterSeq = 0
          let head: string | null = null
          while (true) {
            const rows = yield* sql<StoredRow>`
              SELECT id, tenant_id, seq, event, actor, target, data, ip, created_at, prev_hash, hash
              FROM ${sql(chain)} WHERE tenant_id = ${tenantId} AND seq > ${afterSeq}
              ORDER BY seq LIMIT ${verifyBatchSize}`
            for (const row of rows) {
              checked++
              const expected = entryHash(prevHash, row)
              if (row.prev_hash !== prevHash || row.hash !== expected || Number(row.seq) !== afterSeq + 1) {
                invalid++
                firstInvalid ??= row.id
              }
              // Continue from the stored hash so one tampered row is reported once, not for the whole tail.
              prevHash = row.hash
              afterSeq = Number(row.seq)
              head = row.hash
            }
            if (rows.length < verifyBatchSize) break
          }
          return {
            valid: invalid === 0,
            entries_checked: checked,
            entries_invalid: invalid,
            first_invalid_id: firstInvalid,
            head_hash: head,
            verified_at: new Date().toISOString()
          } satisfies Audit.ChainIntegrity
        })

      return AuditLog.of({ append, verify })
    })
  )
}
