/**
 * Who manages which API keys, and when a key stops working (issue #8, item
 * 2): users manage their own keys with the scopes their role allows,
 * administrators every key of the tenant; a key dies with its owner's access.
 */
import type { Role } from "@agent-platform/domain"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { adminClient, bearer, http, layer as testServer, messageOf, serverSuite, signIn } from "./TestServer.ts"

const password = "Key-Owner-Passw0rd"

/** A new signed-in user of `role` in the bootstrap tenant. */
const userWith = (role: Role) =>
  Effect.gen(function*() {
    const admin = yield* adminClient
    const email = `${role.replace("r_", "")}-${crypto.randomUUID().slice(0, 8)}@keys.example.com`
    const user = yield* admin.api.admin.createUser({ payload: { email, nombre: role, password, role_id: role } })
    return { id: user.id, email, client: yield* signIn(email, password) }
  }).pipe(Effect.orDie)

const agentsStatus = (key: string) =>
  Effect.map(http("/v1/agents", { headers: bearer(key) }), (response) => response.status)

layer(testServer(), serverSuite)("API key management", (it) => {
  describe("GET /v1/keys", () => {
    it.effect("a plain user sees only their own keys; an administrator sees every key of the tenant", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const adminsKey = yield* admin.api.keys.create({ payload: { name: "admin's", scopes: ["chat"] } })
        const ana = yield* userWith("r_user")
        const bob = yield* userWith("r_user")
        const anasKey = yield* ana.client.api.keys.create({ payload: { name: "ana's", scopes: ["chat"] } })
        const bobsKey = yield* bob.client.api.keys.create({ payload: { name: "bob's", scopes: ["agents:read"] } })
        const anaSees = (yield* ana.client.api.keys.list()).keys
        assert.deepStrictEqual(anaSees.map((key) => key.id), [anasKey.id])
        assert.strictEqual(anaSees[0].created_by, ana.id)
        const adminSees = (yield* admin.api.keys.list()).keys.map((key) => key.id)
        assert.includeMembers(adminSees, [adminsKey.id, anasKey.id, bobsKey.id])
      }))
  })

  describe("POST /v1/keys", () => {
    it.effect("a plain user gets 403 for scopes beyond chatting and reading; an administrator may mint any scope", () =>
      Effect.gen(function*() {
        const ana = yield* userWith("r_user")
        const allowed = yield* ana.client.api.keys.create({
          payload: { name: "reader", scopes: ["chat", "agents", "agents:read", "knowledge:read", "actions:read"] }
        })
        assert.match(allowed.key, /^sk_live_/)
        for (
          const scope of [
            "files",
            "knowledge:write",
            "actions",
            "actions:execute",
            "analytics",
            "usage:read",
            "scim"
          ] as const
        ) {
          const refused = yield* ana.client.api.keys.create({ payload: { name: "too much", scopes: ["chat", scope] } })
            .pipe(Effect.flip)
          assert.strictEqual(refused._tag, "AccessDenied", scope)
          assert.match(messageOf(refused), new RegExp(`may not create keys with \`${scope}\``), scope)
        }
        for (const role of ["r_space_admin", "r_security_officer"] as const) {
          const user = yield* userWith(role)
          const refused = yield* user.client.api.keys.create({ payload: { name: "scim", scopes: ["scim"] } }).pipe(
            Effect.flip
          )
          assert.strictEqual(refused._tag, "AccessDenied", role)
        }
        const admin = yield* userWith("r_admin")
        const scim = yield* admin.client.api.keys.create({
          payload: { name: "scim", scopes: ["scim", "files", "analytics"] }
        })
        assert.match(scim.key, /^sk_live_/)
        const { keys } = yield* ana.client.api.keys.list()
        assert.deepStrictEqual(keys.map((key) => key.id), [allowed.id])
      }))
  })

  describe("DELETE /v1/keys/{id}", () => {
    it.effect("a plain user revokes their own key; another user's key answers 404 like a missing one and keeps working", () =>
      Effect.gen(function*() {
        const ana = yield* userWith("r_user")
        const bob = yield* userWith("r_user")
        const bobsKey = yield* bob.client.api.keys.create({ payload: { name: "bob's", scopes: ["agents:read"] } })
        const refused = yield* ana.client.api.keys.revoke({ params: { id: bobsKey.id } }).pipe(Effect.flip)
        const missing = yield* ana.client.api.keys.revoke({ params: { id: crypto.randomUUID() } }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "NotFound")
        assert.strictEqual(
          messageOf(refused).replace(bobsKey.id, "ID"),
          messageOf(missing).replace(/API key \S+ not/, "API key ID not")
        )
        assert.strictEqual(yield* agentsStatus(bobsKey.key), 200)
        yield* bob.client.api.keys.revoke({ params: { id: bobsKey.id } })
        assert.strictEqual(yield* agentsStatus(bobsKey.key), 401)
      }))

    it.effect("an administrator revokes any key of the tenant", () =>
      Effect.gen(function*() {
        const ana = yield* userWith("r_user")
        const anasKey = yield* ana.client.api.keys.create({ payload: { name: "ana's", scopes: ["agents:read"] } })
        const admin = yield* userWith("r_admin")
        yield* admin.client.api.keys.revoke({ params: { id: anasKey.id } })
        assert.strictEqual(yield* agentsStatus(anasKey.key), 401)
      }))
  })

  describe("a key follows its owner's access", () => {
    it.effect("blocking the owner stops the key at once; unblocking brings it back", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const ana = yield* userWith("r_user")
        const { key } = yield* ana.client.api.keys.create({ payload: { name: "ana's", scopes: ["agents:read"] } })
        assert.strictEqual(yield* agentsStatus(key), 200)
        yield* admin.api.admin.updateUser({ params: { id: ana.id }, payload: { blocked: true } })
        // The spec's 403 for a blocked account: the key still says who it is, its owner may not act.
        const refused = yield* http("/v1/agents", { headers: bearer(key) })
        assert.strictEqual(refused.status, 403)
        assert.strictEqual(refused.body._tag, "AccountBlocked")
        assert.strictEqual(
          refused.body.error,
          "This key's owner is blocked: the key works again once an administrator unblocks them."
        )
        const chat = yield* http("/v1/chat/completions", {
          method: "POST",
          headers: { ...bearer(key), "content-type": "application/json" },
          body: JSON.stringify({ message: "hello" })
        })
        assert.strictEqual(chat.status, 403)
        assert.strictEqual(chat.body._tag, "AccountBlocked")
        const onSessionEndpoint = yield* http("/v1/keys", { headers: bearer(key) })
        assert.strictEqual(onSessionEndpoint.status, 403)
        assert.strictEqual(onSessionEndpoint.body._tag, "AccountBlocked")
        yield* admin.api.admin.updateUser({ params: { id: ana.id }, payload: { blocked: false } })
        assert.strictEqual(yield* agentsStatus(key), 200)
      }))

    it.effect("deactivating the owner stops the key at once", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const ana = yield* userWith("r_user")
        const { key } = yield* ana.client.api.keys.create({ payload: { name: "ana's", scopes: ["agents:read"] } })
        assert.strictEqual(yield* agentsStatus(key), 200)
        yield* admin.api.admin.updateUser({ params: { id: ana.id }, payload: { active: false } })
        const refused = yield* http("/v1/agents", { headers: bearer(key) })
        assert.strictEqual(refused.status, 403)
        assert.strictEqual(refused.body._tag, "AccountBlocked")
        assert.strictEqual(
          refused.body.error,
          "This key's owner is deactivated: the key works again once an administrator reactivates them."
        )
      }))

    it.effect("demoting an administrator stops the keys that need the old role, not the others", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const carol = yield* userWith("r_admin")
        const broad = yield* carol.client.api.keys.create({
          payload: { name: "broad", scopes: ["agents:read", "analytics"] }
        })
        const narrow = yield* carol.client.api.keys.create({ payload: { name: "narrow", scopes: ["agents:read"] } })
        assert.strictEqual(yield* agentsStatus(broad.key), 200)
        assert.strictEqual(yield* agentsStatus(narrow.key), 200)
        yield* admin.api.admin.updateUser({ params: { id: carol.id }, payload: { role_id: "r_user" } })
        const refused = yield* http("/v1/agents", { headers: bearer(broad.key) })
        assert.strictEqual(refused.status, 403)
        assert.strictEqual(refused.body._tag, "ScopeMissing")
        assert.match(refused.body.error, /^This key's owner's role \(r_user\) no longer allows its scope `analytics`/)
        assert.strictEqual(yield* agentsStatus(narrow.key), 200)
      }))

    it.effect("a change made outside the admin surface (SCIM, SQL) reaches the key cache too", () =>
      Effect.gen(function*() {
        const ana = yield* userWith("r_user")
        const { key } = yield* ana.client.api.keys.create({ payload: { name: "ana's", scopes: ["agents:read"] } })
        assert.strictEqual(yield* agentsStatus(key), 200)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE users SET active = false WHERE id = ${ana.id}`
        const deadline = Date.now() + 10_000
        let status = yield* agentsStatus(key)
        while (status !== 403 && Date.now() < deadline) {
          yield* Effect.sleep("20 millis")
          status = yield* agentsStatus(key)
        }
        assert.strictEqual(status, 403)
      }))
  })
})
