/**
 * Lockout that cannot be used as a weapon (issue #8, item 4): it stops new
 * sign-ins only, counts concurrent failures exactly, answers like a wrong
 * password, and an email shared by two tenants reveals neither.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  adminClient,
  bearer,
  http,
  json,
  layer as testServer,
  secondTenant,
  serverSuite,
  signIn
} from "./TestServer.ts"

const password = "Correct-Horse-9"
const login = (body: Record<string, unknown>) => http("/api/auth/login", json("POST", body))

const newUser = (role: "r_user" | "r_admin" = "r_user") =>
  Effect.gen(function*() {
    const admin = yield* adminClient
    const email = `lock-${crypto.randomUUID().slice(0, 8)}@example.com`
    const user = yield* admin.api.admin.createUser({ payload: { email, nombre: "Lock", password, role_id: role } })
    return { id: user.id, email }
  }).pipe(Effect.orDie)

const auditCount = (userId: string, event: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<
      { n: number }
    >`SELECT count(*)::int AS n FROM audit_logs WHERE actor = ${`user:${userId}`} AND event = ${event}`
    return row.n
  }).pipe(Effect.orDie)

const lockedUntil = (userId: string) =>
  Effect.gen(function*() {
    const admin = yield* adminClient
    return (yield* admin.api.admin.listUsers()).users.find((user) => user.id === userId)!.locked_until
  }).pipe(Effect.orDie)

layer(testServer(), serverSuite)("lockout", (it) => {
  describe("counting", () => {
    it.effect("30 concurrent wrong passwords check exactly lockout_threshold + 1 of them, then lock", () =>
      Effect.gen(function*() {
        const user = yield* newUser()
        const answers = yield* Effect.forEach(
          Array.from({ length: 30 }, () => user.email),
          (email) => login({ email, password: "Wrong-Password-1" }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual([...new Set(answers.map((a) => `${a.status} ${JSON.stringify(a.body)}`))], [
          `401 ${JSON.stringify({ _tag: "Unauthenticated", error: "Invalid email or password." })}`
        ])
        // The default policy allows 5 consecutive failures; the 6th locks.
        assert.strictEqual(yield* auditCount(user.id, "auth.login_failed"), 6)
        assert.strictEqual(yield* auditCount(user.id, "auth.login_locked"), 24)
        assert.isNotNull(yield* lockedUntil(user.id))
      }))

    it.effect("20 concurrent right passwords all sign in: pending attempts queue, they do not fail", () =>
      Effect.gen(function*() {
        const user = yield* newUser()
        const answers = yield* Effect.forEach(
          Array.from({ length: 20 }, () => user.email),
          (email) => login({ email, password }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual([...new Set(answers.map((a) => a.status))], [200])
        assert.isNull(yield* lockedUntil(user.id))
      }))
  })

  describe("a locked account", () => {
    it.effect("answers the right password exactly like a wrong one or an unknown email; only the admin surface says locked", () =>
      Effect.gen(function*() {
        const user = yield* newUser()
        for (let attempt = 0; attempt < 6; attempt++) yield* login({ email: user.email, password: "Wrong-Password-1" })
        const right = yield* login({ email: user.email, password })
        const wrong = yield* login({ email: user.email, password: "Wrong-Password-1" })
        const unknown = yield* login({ email: `nobody-${crypto.randomUUID().slice(0, 8)}@example.com`, password })
        assert.strictEqual(right.status, 401)
        assert.deepStrictEqual(right.body, wrong.body)
        assert.deepStrictEqual(right.body, unknown.body)
        assert.notMatch(JSON.stringify(right.body), /lock/i)
        const until = yield* lockedUntil(user.id)
        assert.isNotNull(until)
        assert.isAbove(Date.parse(until!), Date.now())
        const admin = yield* adminClient
        const listed = (yield* admin.api.admin.listUsers()).users.find((u) => u.id === user.id)!
        assert.strictEqual(listed.blocked, false)
        yield* admin.api.admin.updateUser({ params: { id: user.id }, payload: { blocked: false } })
        assert.isNull(yield* lockedUntil(user.id))
        assert.strictEqual((yield* login({ email: user.email, password })).status, 200)
      }))

    it.effect("keeps its live sessions and API keys: lockout stops new sign-ins only", () =>
      Effect.gen(function*() {
        const user = yield* newUser("r_admin")
        const session = yield* signIn(user.email, password)
        const { key } = yield* session.api.keys.create({ payload: { name: "integration", scopes: ["agents:read"] } })
        for (let attempt = 0; attempt < 10; attempt++) yield* login({ email: user.email, password: "Wrong-Password-1" })
        assert.isNotNull(yield* lockedUntil(user.id))
        const me = yield* session.api.auth.me()
        assert.strictEqual(me.user_id, user.id)
        const { users } = yield* session.api.admin.listUsers()
        assert.isTrue(users.length > 0)
        assert.strictEqual((yield* http("/v1/agents", { headers: bearer(key) })).status, 200)
      }))

    it.effect("a blocked account and a disallowed IP are told only to the right password", () =>
      Effect.gen(function*() {
        const user = yield* newUser()
        const admin = yield* adminClient
        yield* admin.api.admin.updateUser({ params: { id: user.id }, payload: { blocked: true } })
        const wrong = yield* login({ email: user.email, password: "Wrong-Password-1" })
        assert.strictEqual(wrong.status, 401)
        assert.strictEqual(wrong.body.error, "Invalid email or password.")
        const right = yield* login({ email: user.email, password })
        assert.strictEqual(right.status, 403)
        assert.strictEqual(right.body._tag, "AccountBlocked")
      }))
  })

  describe("an email in two tenants", () => {
    it.effect("creating it in another tenant reveals nothing, and each account signs in with its own password", () =>
      Effect.gen(function*() {
        const user = yield* newUser()
        const other = yield* secondTenant()
        const created = yield* other.client.api.admin.createUser({
          payload: { email: user.email, nombre: "Namesake", password: "Other-Passw0rd-22", role_id: "r_user" }
        })
        assert.strictEqual(created.email, user.email)
        const duplicate = yield* other.client.api.admin.createUser({
          payload: { email: user.email, nombre: "Again", password: "Other-Passw0rd-22", role_id: "r_user" }
        }).pipe(Effect.flip)
        assert.strictEqual(duplicate._tag, "Conflict")
        const mine = yield* login({ email: user.email, password })
        assert.strictEqual(mine.status, 200)
        assert.strictEqual(mine.body.user_id, user.id)
        const theirs = yield* login({ email: user.email, password: "Other-Passw0rd-22" })
        assert.strictEqual(theirs.status, 200)
        assert.strictEqual(theirs.body.user_id, created.id)
        assert.strictEqual(theirs.body.tenant_id, other.tenant.id)
      }))

    it.effect("the same password in both asks for the tenant, and a wrong one locks neither beyond its own count", () =>
      Effect.gen(function*() {
        const user = yield* newUser()
        const other = yield* secondTenant()
        const created = yield* other.client.api.admin.createUser({
          payload: { email: user.email, nombre: "Namesake", password, role_id: "r_user" }
        })
        const ambiguous = yield* login({ email: user.email, password })
        assert.strictEqual(ambiguous.status, 401)
        assert.match(ambiguous.body.error, /send `tenant`/)
        const chosen = yield* login({ email: user.email, password, tenant: other.tenant.name })
        assert.strictEqual(chosen.status, 200)
        assert.strictEqual(chosen.body.user_id, created.id)
        const byId = yield* login({ email: user.email, password, tenant: other.tenant.id })
        assert.strictEqual(byId.body.user_id, created.id)
      }))
  })
})
