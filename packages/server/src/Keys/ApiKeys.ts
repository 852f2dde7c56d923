/**
 * API keys: creation (the secret shown once), listing, revocation, and the
 * verification every `/v1` request goes through — a hot path: a verified key
 * is cached in memory for 30 s, revocation evicts it at once on every replica
 * (LISTEN/NOTIFY), and last use is written in batches by the api worker.
 */
import { Cache, Context, Duration, Effect, Exit, Layer, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { createHash, randomBytes } from "node:crypto"
import { Errors, type KeyPrincipal, type Keys, type UserPrincipal } from "@agent-platform/domain"
import { AuditLog } from "../Audit/AuditLog.ts"
import { isUuid } from "../Platform/Ids.ts"
import { Notifications } from "../Platform/Notifications.ts"
import { type KeyRow, KeysRepo } from "./KeysRepo.ts"

/** `sk_live_` + 64 lowercase hex characters (spec: "Authentication", rule 2). */
const keyPattern = /^sk_live_[0-9a-f]{64}$/

export const hashKey = (key: string) => createHash("sha256").update(key).digest("hex")

const revokedTopic = "api_key_revoked"
const defaultRpm = 300

const toListItem = (row: KeyRow): Keys.ApiKeyListItem => ({
  id: row.id,
  name: row.name,
  key_prefix: row.key_prefix,
  scopes: JSON.stringify(row.scopes),
  space_id: row.space_id,
  rate_limit_rpm: row.rate_limit_rpm,
  is_active: row.is_active,
  last_used_at: row.last_used_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString()
})

const toPrincipal = (row: KeyRow): KeyPrincipal => ({
  _tag: "Key",
  tenantId: row.tenant_id,
  keyId: row.id,
  scopes: row.scopes,
  spaceId: row.space_id,
  rateLimitRpm: row.rate_limit_rpm
})

export class ApiKeys extends Context.Service<ApiKeys, {
  readonly create: (
    owner: UserPrincipal,
    input: Keys.CreateApiKey,
    ip: string | null
  ) => Effect.Effect<typeof Keys.ApiKeyCreated.Type, Errors.InvalidRequest | SqlError>
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<Keys.ApiKeyListItem>, SqlError>
  readonly revoke: (owner: UserPrincipal, id: string, ip: string | null) => Effect.Effect<void, Errors.NotFound | SqlError>
  /** The principal of a presented key; undefined for a malformed, unknown or revoked one. */
  readonly verify: (key: string) => Effect.Effect<KeyPrincipal | undefined, SqlError>
  /** Writes the last-use times collected since the previous flush (a step of the api worker). */
  readonly flushUsage: Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Keys/ApiKeys") {
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* KeysRepo
      const audit = yield* AuditLog
      const notifications = yield* Notifications

      const cache = yield* Cache.makeWith(
        (hash: string) => Effect.map(repo.findActiveByHash(hash), (row) => (row === undefined ? undefined : toPrincipal(row))),
        {
          capacity: 10_000,
          // Unknown keys are remembered briefly too, so guessing costs no database round trip each time.
          timeToLive: (exit) => Exit.isSuccess(exit) ? (exit.value === undefined ? Duration.seconds(5) : Duration.seconds(30)) : Duration.zero
        }
      )
      yield* notifications.subscribe(revokedTopic).pipe(
        Stream.runForEach((hash) => Cache.invalidate(cache, hash)),
        Effect.forkScoped
      )

      const lastUsed = new Map<string, Date>()

      const create = Effect.fn("ApiKeys.create")(function*(owner: UserPrincipal, input: Keys.CreateApiKey, ip: string | null) {
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
      })

      const revoke = Effect.fn("ApiKeys.revoke")(function*(owner: UserPrincipal, id: string, ip: string | null) {
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* repo.revoke(owner.tenantId, id)
          if (row === undefined) return undefined
          yield* audit.append("audit_logs", {
            tenantId: owner.tenantId,
            event: "key.revoked",
            actor: `user:${owner.userId}`,
            target: `key:${row.id}`,
            data: { name: row.name, prefix: row.key_prefix },
            ip
          })
          // Delivered to every replica once the revocation commits.
          yield* notifications.publish(revokedTopic, row.key_hash)
          return row
        }))
        if (row === undefined) return yield* new Errors.NotFound({ error: `API key ${id} not found` })
        yield* Cache.invalidate(cache, row.key_hash)
      })

      const verify = (key: string) => {
        if (!keyPattern.test(key)) return Effect.succeed(undefined)
        return Effect.tap(Cache.get(cache, hashKey(key)), (principal) =>
          Effect.sync(() => {
            if (principal !== undefined) lastUsed.set(principal.keyId, new Date())
          }))
      }

      const flushUsage = Effect.suspend(() => {
        const batch = [...lastUsed.entries()]
        lastUsed.clear()
        return repo.touch(batch)
      })

      return ApiKeys.of({
        create,
        list: (tenantId) => Effect.map(repo.list(tenantId), (rows) => rows.map(toListItem)),
        revoke,
        verify,
        flushUsage
      })
    })
  ).pipe(Layer.provide(KeysRepo.layer))
}
