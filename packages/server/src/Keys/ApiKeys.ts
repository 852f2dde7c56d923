/**
 * API keys: creation (the secret shown once), listing, revocation, and the
 * verification every `/v1` request goes through — a hot path: verified keys
 * are cached (see VerifiedKeys.ts: revocation evicts a key on every replica
 * before it answers), and last use is written in batches by the api worker.
 * Who may manage which keys is decided in Access/KeyPolicy.ts.
 */
import { Errors, type Keys, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as NodeCrypto from "node:crypto"
import { createHash, randomBytes } from "node:crypto"
import { authorizeScopes, keyOwnerFilter } from "../Access/KeyPolicy.ts"
import { AuditLog } from "../Audit/AuditLog.ts"
import { type Eager, toEffect } from "../Platform/Eager.ts"
import { isUuid } from "../Platform/Ids.ts"
import { type KeyRow, KeysRepo } from "./KeysRepo.ts"
import { type KeyVerdict, unknownKey, VerifiedKeys } from "./VerifiedKeys.ts"

/** `sk_live_` + 64 lowercase hex characters (spec: "Authentication", rule 2). */
const keyPattern = /^sk_live_[0-9a-f]{64}$/

/**
 * The SHA-256 of a key, in hex: what the database stores and what every
 * request's key is looked up by. Node's one-shot `crypto.hash` (from 20.12)
 * costs about a third of a `createHash` object per call; older Node 20
 * releases, which lack it, use the latter.
 */
// (Read off the namespace: a named import of an export Node lacks would fail to link.)
export const hashKey: (key: string) => string = typeof NodeCrypto.hash === "function"
  ? (key) => NodeCrypto.hash("sha256", key, "hex")
  : (key) => createHash("sha256").update(key).digest("hex")

const defaultRpm = 300

const toListItem = (row: KeyRow): Keys.ApiKeyListItem => ({
  id: row.id,
  name: row.name,
  key_prefix: row.key_prefix,
  scopes: JSON.stringify(row.scopes),
  space_id: row.space_id,
  created_by: row.created_by,
  rate_limit_rpm: row.rate_limit_rpm,
  is_active: row.is_active,
  last_used_at: row.last_used_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString()
})

export class ApiKeys extends Context.Service<ApiKeys, {
  readonly create: (
    owner: UserPrincipal,
    input: Keys.CreateApiKey,
    ip: string | null
  ) => Effect.Effect<typeof Keys.ApiKeyCreated.Type, Errors.InvalidRequest | Errors.AccessDenied | SqlError>
  /** The keys the user manages: the tenant's for an administrator, else the user's own. */
  readonly list: (user: UserPrincipal) => Effect.Effect<ReadonlyArray<Keys.ApiKeyListItem>, SqlError>
  /** Revokes a key the user manages; once this returns, no replica accepts it. */
  readonly revoke: (
    user: UserPrincipal,
    id: string,
    ip: string | null
  ) => Effect.Effect<void, Errors.NotFound | SqlError>
  /** The key's principal, or why it is refused (the 401's words); a database failure is a defect. */
  readonly verify: (key: string) => Effect.Effect<KeyVerdict>
  /**
   * {@link verify}'s answer, as a plain value when it needs no database read
   * (a malformed key, or a key this replica holds a current verdict for),
   * else the effect that reads it.
   */
  readonly verifyEager: (key: string) => Eager<KeyVerdict>
  /** Writes the last-use times collected since the previous flush (a step of the api worker). */
  readonly flushUsage: Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Keys/ApiKeys") {
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* KeysRepo
      const audit = yield* AuditLog
      const verified = yield* VerifiedKeys

      // Milliseconds of the last use per key id: a number per request, dates only when written.
      const lastUsed = new Map<string, number>()

      const create = Effect.fn("ApiKeys.create")(
        function*(owner: UserPrincipal, input: Keys.CreateApiKey, ip: string | null) {
          yield* authorizeScopes(owner, input.scopes)
          const spaceId = input.space_id ?? null
          if (spaceId !== null) {
            const space = isUuid(spaceId)
              ? yield* sql`SELECT id FROM spaces WHERE tenant_id = ${owner.tenantId} AND id = ${spaceId}`
              : []
            if (space.length === 0) {
              return yield* new Errors.InvalidRequest({ error: `space_id ${spaceId} is not a space of your tenant` })
            }
          }
          const key = `sk_live_${randomBytes(32).toString("hex")}`
          const prefix = key.slice(0, 16)
          const scopes = [...new Set(input.scopes)]
          const row = yield* sql.withTransaction(Effect.gen(function*() {
            const row = yield* repo.insert({
              tenantId: owner.tenantId,
              name: input.name,
              prefix,
              hash: hashKey(key),
              scopes,
              spaceId,
              rateLimitRpm: input.rate_limit_rpm ?? defaultRpm,
              createdBy: owner.userId
            })
            yield* audit.append("audit_logs", {
              tenantId: owner.tenantId,
              event: "key.created",
              actor: `user:${owner.userId}`,
              target: `key:${row.id}`,
              data: { name: row.name, scopes, space_id: spaceId, rate_limit_rpm: row.rate_limit_rpm, prefix },
              ip
            })
            return row
          }))
          return {
            id: row.id,
            key,
            prefix,
            message: "Store this key now: it is shown only once. Send it as Authorization: Bearer <key>."
          }
        }
      )

      const revoke = Effect.fn("ApiKeys.revoke")(function*(user: UserPrincipal, id: string, ip: string | null) {
        const hash = yield* repo.hashOf(user.tenantId, id, keyOwnerFilter(user))
        if (hash === undefined) return yield* new Errors.NotFound({ error: `API key ${id} not found` })
        yield* verified.evicting({ _tag: "Key", hash }, (publish) =>
          sql.withTransaction(Effect.gen(function*() {
            const row = yield* repo.revoke(user.tenantId, id, keyOwnerFilter(user))
            if (row === undefined) return
            yield* audit.append("audit_logs", {
              tenantId: user.tenantId,
              event: "key.revoked",
              actor: `user:${user.userId}`,
              target: `key:${row.id}`,
              data: { name: row.name, prefix: row.key_prefix },
              ip
            })
            // Leaves when the revocation commits; every live replica acknowledges it before this returns.
            yield* publish
          })))
      })

      const used = (verdict: KeyVerdict) => {
        if (verdict._tag === "Key") lastUsed.set(verdict.keyId, Date.now())
        return verdict
      }
      const verifyEager = (key: string): Eager<KeyVerdict> => {
        if (!keyPattern.test(key)) return unknownKey
        const hash = hashKey(key)
        const held = verified.peek(hash)
        return held !== undefined ? used(held) : Effect.map(verified.get(hash), used)
      }

      const flushUsage = Effect.suspend(() => {
        const batch = Array.from(lastUsed, ([id, at]) => [id, new Date(at)] as const)
        lastUsed.clear()
        return repo.touch(batch)
      })

      return ApiKeys.of({
        create,
        list: (user) => Effect.map(repo.list(user.tenantId, keyOwnerFilter(user)), (rows) => rows.map(toListItem)),
        revoke,
        verify: (key) => Effect.suspend(() => toEffect(verifyEager(key))),
        verifyEager,
        flushUsage
      })
    })
  ).pipe(Layer.provide(Layer.merge(KeysRepo.layer, VerifiedKeys.layer)))
}
