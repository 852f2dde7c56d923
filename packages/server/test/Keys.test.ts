import { assert, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash, randomBytes } from "node:crypto"
import { ApiKeys } from "../src/Keys/ApiKeys.ts"
import { eventually } from "./Eventually.ts"
import {
  adminClient,
  bearer,
  createKey,
  http,
  json,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  sessionCookie,
  TestServer
} from "./TestServer.ts"

layer(testServer({ CRON_INTERVAL_MS: "300" }), serverSuite)("API keys", (it) => {
  it.effect("POST /v1/keys returns sk_live_ + 64 hex once, stored only as its SHA-256", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const created = yield* admin.api.keys.create({ payload: { name: "widget", scopes: ["chat"] } })
      assert.match(created.key, /^sk_live_[0-9a-f]{64}$/)
      assert.strictEqual(created.prefix, created.key.slice(0, 16))
      assert.match(created.message, /shown only once/)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<
        { key_hash: string; key_prefix: string }
      >`SELECT key_hash, key_prefix FROM api_keys WHERE id = ${created.id}`
      assert.strictEqual(rows[0].key_hash, createHash("sha256").update(created.key).digest("hex"))
      const dump = JSON.stringify(yield* sql`SELECT * FROM api_keys`)
      assert.notInclude(dump, created.key)
      const listed = yield* admin.api.keys.list()
      const item = listed.keys.find((key) => key.id === created.id)!
      assert.strictEqual(item.scopes, "[\"chat\"]")
      assert.strictEqual(item.key_prefix, created.prefix)
      assert.strictEqual(item.rate_limit_rpm, 300)
      assert.strictEqual(item.is_active, true)
      assert.notInclude(JSON.stringify(listed), created.key)
    }))

  it.effect("rejects unknown scopes and a space of another tenant with 400", () =>
    Effect.gen(function*() {
      const unknown = yield* http(
        "/v1/keys",
        json("POST", { name: "x", scopes: ["root"] }, { cookie: yield* adminCookie })
      )
      assert.strictEqual(unknown.status, 400)
      assert.match(unknown.body.error, /scopes/)
      const other = yield* secondTenant()
      const space = yield* other.client.api.admin.createSpace({ payload: { code: "theirs", name: "Theirs" } })
      const server = yield* TestServer
      const admin = yield* server.admin
      const error = yield* admin.api.keys.create({ payload: { name: "x", scopes: ["chat"], space_id: space.id } }).pipe(
        Effect.flip
      )
      assert.strictEqual(error._tag, "InvalidRequest")
      assert.match(messageOf(error), /not a space of your tenant/)
    }))

  it.effect("key management refuses API keys: 403 with a valid key, 401 with an invalid one", () =>
    Effect.gen(function*() {
      const { key } = yield* createKey(["chat", "agents"])
      const withKey = yield* http("/v1/keys", { headers: bearer(key) })
      assert.strictEqual(withKey.status, 403)
      assert.strictEqual(withKey.body._tag, "SessionRequired")
      const invalid = yield* http("/v1/keys", { headers: bearer(`sk_live_${"0".repeat(64)}`) })
      assert.strictEqual(invalid.status, 401)
    }))

  it.effect("a Bearer key decides over a cookie: an invalid key is 401 even with a valid session", () =>
    Effect.gen(function*() {
      const cookie = yield* adminCookie
      const me = yield* http("/api/auth/me", { headers: { cookie } })
      assert.strictEqual(me.status, 200)
      const both = yield* http("/api/auth/me", { headers: { cookie, authorization: "Bearer sk_live_nope" } })
      assert.strictEqual(both.status, 401)
      assert.strictEqual(both.body._tag, "Unauthenticated")
    }))

  it.effect("a revoked key is refused at once", () =>
    Effect.gen(function*() {
      const { id, key } = yield* createKey(["agents"])
      const before = yield* http("/v1/agents", { headers: bearer(key) })
      assert.notStrictEqual(before.status, 401)
      const server = yield* TestServer
      const admin = yield* server.admin
      const revoked = yield* admin.api.keys.revoke({ params: { id } })
      assert.deepStrictEqual(revoked, { success: true, message: "API key revoked: it is refused from now on." })
      const after = yield* http("/v1/agents", { headers: bearer(key) })
      assert.strictEqual(after.status, 401)
      assert.strictEqual(after.body.error, "Invalid or revoked API key.")
      const listed = yield* admin.api.keys.list()
      assert.strictEqual(listed.keys.find((k) => k.id === id)!.is_active, false)
      const again = yield* admin.api.keys.revoke({ params: { id: crypto.randomUUID() } }).pipe(Effect.flip)
      assert.strictEqual(again._tag, "NotFound")
    }))

  it.effect("a burst of keys not seen before, looked up together, each gets its own verdict", () =>
    Effect.gen(function*() {
      // Valid keys with the scope, valid keys without it, revoked keys and unknown keys, all first used at once:
      // their lookups go to the database together, and each answer must be its own key's.
      const server = yield* TestServer
      const admin = yield* server.admin
      const mix = Effect.gen(function*() {
        const readers = yield* Effect.all(Array.from({ length: 6 }, () => createKey(["agents"])))
        const chatters = yield* Effect.all(Array.from({ length: 4 }, () => createKey(["chat"])))
        const revoked = yield* Effect.all(Array.from({ length: 4 }, () => createKey(["agents"])))
        yield* Effect.forEach(revoked, ({ id }) => admin.api.keys.revoke({ params: { id } }), { discard: true })
        const unknown = Array.from({ length: 4 }, () => `sk_live_${randomBytes(32).toString("hex")}`)
        return [
          ...readers.map(({ id, key }) => ({ key, id, status: 200 })),
          ...chatters.map(({ id, key }) => ({ key, id, status: 403 })),
          ...revoked.map(({ key }) => ({ key, id: undefined, status: 401 })),
          ...unknown.map((key) => ({ key, id: undefined, status: 401 }))
        ]
      })
      // Verified in one step of the process: every lookup joins one batch.
      const keys = yield* ApiKeys
      const direct = yield* mix
      const verdicts = yield* Effect.forEach(direct, ({ key }) => keys.verify(key), { concurrency: "unbounded" })
      assert.deepStrictEqual(
        verdicts.map((verdict) => (verdict._tag === "Key" ? verdict.keyId : undefined)),
        direct.map(({ id }) => id)
      )
      // Over HTTP, first use and then from the cache.
      const overHttp = yield* mix
      for (const round of ["first use", "cached"]) {
        const answers = yield* Effect.forEach(
          overHttp,
          ({ key }) => http("/v1/agents", { headers: bearer(key) }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(answers.map((answer) => answer.status), overHttp.map(({ status }) => status), round)
      }
    }))

  it.effect(
    "a key in use is read again in the background before its 30 s are up: a change made outside the service applies",
    () =>
      Effect.gen(function*() {
        const { id, key } = yield* createKey(["agents"])
        const status = Effect.map(http("/v1/agents", { headers: bearer(key) }), (answer) => answer.status)
        assert.strictEqual(yield* status, 200)
        // No trigger publishes a change to api_keys: only the verdict's age bounds how long the old one is used.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE api_keys SET scopes = ARRAY['chat'] WHERE id = ${id}`
        const changedAt = Date.now()
        // Used all along (4 requests a second, under the class's 300 a minute): its verdict never expires unused.
        const refused = yield* status.pipe(
          Effect.repeat({ schedule: Schedule.spaced("250 millis"), until: (code) => code !== 200 }),
          Effect.timeout("40 seconds")
        )
        assert.strictEqual(refused, 403)
        // Read again in the background 20–25 s after it was read, before its 30 s were up: no request waited for it.
        assert.isAtMost(Date.now() - changedAt, 27_000)
      }),
    { timeout: 60_000 }
  )

  it.effect("a missing or malformed key is 401 on the key interface", () =>
    Effect.gen(function*() {
      const none = yield* http("/v1/agents")
      assert.strictEqual(none.status, 401)
      assert.match(none.body.error, /Missing API key/)
      const malformed = yield* http("/v1/agents", { headers: bearer("hello") })
      assert.strictEqual(malformed.status, 401)
    }))

  it.effect("a missing scope is 403 naming the scopes needed; a broad and a narrow scope are alternatives", () =>
    Effect.gen(function*() {
      const chatOnly = yield* createKey(["chat"])
      const refused = yield* http("/v1/agents", { headers: bearer(chatOnly.key) })
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body._tag, "ScopeMissing")
      assert.match(refused.body.error, /`agents` or `agents:read`/)
      for (const scope of ["agents", "agents:read"] as const) {
        const { key } = yield* createKey([scope])
        const allowed = yield* http("/v1/agents", { headers: bearer(key) })
        assert.notStrictEqual(allowed.status, 403, `scope ${scope}`)
        assert.notStrictEqual(allowed.status, 401, `scope ${scope}`)
      }
    }))

  it.effect("writes last_used_at in batches, without a write per request", () =>
    Effect.gen(function*() {
      const { id, key } = yield* createKey(["agents"])
      yield* http("/v1/agents", { headers: bearer(key) })
      const server = yield* TestServer
      const admin = yield* server.admin
      // The api worker writes last use once per cycle (CRON_INTERVAL_MS): wait for the cycle, to a deadline.
      const listed = yield* eventually(admin.api.keys.list(), ({ keys }) =>
        keys.find((k) => k.id === id)!.last_used_at !== null)
      assert.isNotNull(
        listed.keys.find((k) =>
          k.id === id
        )!.last_used_at
      )
    }))

  it.effect("keys, and their revocation, are invisible to another tenant", () =>
    Effect.gen(function*() {
      const mine = yield* createKey(["chat"])
      const other = yield* secondTenant()
      const theirs = yield* other.client.api.keys.list()
      assert.isFalse(theirs.keys.some((k) => k.id === mine.id))
      const error = yield* other.client.api.keys.revoke({ params: { id: mine.id } }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "NotFound")
      // A tenant_id in the body has no effect: the key lands in the caller's tenant.
      const created = yield* http(
        "/v1/keys",
        json("POST", { name: "sneaky", scopes: ["chat"], tenant_id: "00000000-0000-0000-0000-000000000000" }, {
          cookie: yield* sessionCookie(other.client)
        })
      )
      assert.strictEqual(created.status, 201)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ tenant_id: string }>`SELECT tenant_id FROM api_keys WHERE id = ${created.body.id}`
      assert.strictEqual(row.tenant_id, other.tenant.id)
    }))
})

layer(testServer(), serverSuite)("rate limits", (it) => {
  it.effect("a key over its rate_limit_rpm gets 429 with Retry-After and X-RateLimit headers", () =>
    Effect.gen(function*() {
      const { key } = yield* createKey(["agents"], { rate_limit_rpm: 2 })
      const first = yield* http("/v1/agents", { headers: bearer(key) })
      assert.strictEqual(first.headers.get("x-ratelimit-limit"), "2")
      assert.strictEqual(first.headers.get("x-ratelimit-remaining"), "1")
      assert.isNotNull(first.headers.get("x-ratelimit-reset"))
      const second = yield* http("/v1/agents", { headers: bearer(key) })
      assert.strictEqual(second.headers.get("x-ratelimit-remaining"), "0")
      const third = yield* http("/v1/agents", { headers: bearer(key) })
      assert.strictEqual(third.status, 429)
      assert.strictEqual(third.body._tag, "RateLimited")
      assert.match(third.body.error, /2 requests per minute/)
      const retryAfter = Number(third.headers.get("retry-after"))
      assert.isTrue(retryAfter >= 1 && retryAfter <= 60)
      assert.strictEqual(third.headers.get("x-ratelimit-remaining"), "0")
      // Another key is not affected.
      const other = yield* createKey(["agents"], { rate_limit_rpm: 2 })
      assert.notStrictEqual((yield* http("/v1/agents", { headers: bearer(other.key) })).status, 429)
    }))

  it.effect("the endpoint class limit applies when stricter than the key's: ingest allows 60 a minute", () =>
    Effect.gen(function*() {
      const { key } = yield* createKey(["files"], { rate_limit_rpm: 1000 })
      const response = yield* http(
        "/v1/knowledge/ingest",
        json("POST", { agent_id: "x", filename: "a.txt", content: "x" }, bearer(key))
      )
      assert.strictEqual(response.headers.get("x-ratelimit-limit"), "60")
      const data = yield* http("/v1/knowledge", { headers: bearer(key) })
      assert.strictEqual(data.headers.get("x-ratelimit-limit"), "300")
    }))
})

const adminCookie = Effect.flatMap(adminClient, sessionCookie)
