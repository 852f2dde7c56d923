import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  adminEmail,
  http,
  json,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  signIn,
  TestServer
} from "./TestServer.ts"

layer(testServer(), serverSuite)("the admin surface", (it) => {
  it.effect("creates, lists and updates users; the password policy applies; emails are unique", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const created = yield* admin.api.admin.createUser({
        payload: { email: "Ana@Example.com", nombre: "Ana", password: "Correct-Horse-9", role_id: "r_user" }
      })
      assert.strictEqual(created.email, "ana@example.com")
      assert.strictEqual(created.role_id, "r_user")
      assert.strictEqual(created.active, true)
      const weak = yield* admin.api.admin.createUser({
        payload: { email: "weak@example.com", nombre: "Weak", password: "password", role_id: "r_user" }
      }).pipe(Effect.flip)
      assert.strictEqual(weak._tag, "InvalidRequest")
      assert.match(messageOf(weak), /at least 12 characters/)
      const duplicate = yield* admin.api.admin.createUser({
        payload: { email: "ana@example.com", nombre: "Ana 2", password: "Correct-Horse-9", role_id: "r_user" }
      }).pipe(Effect.flip)
      assert.strictEqual(duplicate._tag, "Conflict")
      const listed = yield* admin.api.admin.listUsers()
      assert.includeMembers(listed.users.map((u) => u.email), [adminEmail, "ana@example.com"])
      const deactivated = yield* admin.api.admin.updateUser({ params: { id: created.id }, payload: { active: false } })
      assert.strictEqual(deactivated.active, false)
      // A deactivated account is refused with 403 (SCIM and the admin surface alike), once the password is right.
      const login = yield* http(
        "/api/auth/login",
        json("POST", { email: "ana@example.com", password: "Correct-Horse-9" })
      )
      assert.strictEqual(login.status, 403)
      const missing = yield* admin.api.admin.updateUser({ params: { id: "nope" }, payload: { active: true } }).pipe(
        Effect.flip
      )
      assert.strictEqual(missing._tag, "NotFound")
    }))

  it.effect("text with a NUL character is a 400, whichever field carries it, and nothing is written", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const token = yield* admin.sessionToken
      const response = yield* http(
        "/api/admin/users",
        json("POST", {
          email: "nul@example.com",
          nombre: "Nul\u0000Name",
          password: "Correct-Horse-9",
          role_id: "r_user"
        }, { cookie: `Service-Token=${token}` })
      )
      assert.strictEqual(response.status, 400)
      assert.strictEqual(response.body._tag, "InvalidRequest")
      assert.match(response.body.error, /NUL/)
      const { users } = yield* admin.api.admin.listUsers()
      assert.isFalse(users.some((u) => u.email === "nul@example.com"))
    }))

  it.effect("non-admins get 403 on the admin surface", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.admin.createUser({
        payload: { email: "plain@example.com", nombre: "Plain", password: "Correct-Horse-9", role_id: "r_user" }
      })
      const plain = yield* signIn("plain@example.com", "Correct-Horse-9")
      const error = yield* plain.api.admin.listUsers().pipe(Effect.flip)
      assert.strictEqual(error._tag, "RoleMissing")
      assert.match(messageOf(error), /administrator/)
      const officer = yield* plain.api.audit.verify().pipe(Effect.flip)
      assert.strictEqual(officer._tag, "RoleMissing")
    }))

  it.effect("creates spaces (409 for a taken code) and lists them", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const space = yield* admin.api.admin.createSpace({ payload: { code: "sales", name: "Sales" } })
      assert.strictEqual(space.code, "sales")
      const taken = yield* admin.api.admin.createSpace({ payload: { code: "sales", name: "Again" } }).pipe(Effect.flip)
      assert.strictEqual(taken._tag, "Conflict")
      // The SDK refuses the invalid code before sending; the server refuses it too.
      const sdkRefusal = yield* admin.api.admin.createSpace({ payload: { code: "Has Spaces", name: "x" } }).pipe(
        Effect.flip
      )
      assert.strictEqual(sdkRefusal._tag, "SchemaError")
      const token = yield* admin.sessionToken
      const bad = yield* http(
        "/api/admin/spaces",
        json("POST", { code: "Has Spaces", name: "x" }, { cookie: `Service-Token=${token}` })
      )
      assert.strictEqual(bad.status, 400)
      assert.match(bad.body.error, /^Invalid request body: code: must be lowercase letters/)
      const { spaces } = yield* admin.api.admin.listSpaces()
      assert.deepStrictEqual(spaces.filter((s) => s.code === "sales"), [space])
    }))

  it.effect("tenant flags default to push on and the rest off, and can be set", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const flags = yield* admin.api.admin.getFlags()
      assert.deepStrictEqual(flags, {
        feature_war_rooms: false,
        feature_compliance_pack: false,
        feature_decision_records: false,
        push_notifications: true
      })
      const updated = yield* admin.api.admin.updateFlags({ payload: { feature_war_rooms: true } })
      assert.strictEqual(updated.feature_war_rooms, true)
      assert.strictEqual(updated.push_notifications, true)
      yield* admin.api.admin.updateFlags({ payload: { feature_war_rooms: false } })
    }))

  it.effect("only a superadmin creates tenants; each tenant's users and spaces are invisible to the others", () =>
    Effect.gen(function*() {
      const other = yield* secondTenant("Acme Two")
      assert.strictEqual(other.tenant.name, "Acme Two")
      const me = yield* other.client.api.auth.me()
      assert.strictEqual(me.role_id, "r_admin")
      assert.strictEqual(me.tenant_id, other.tenant.id)
      const refused = yield* other.client.api.admin.createTenant({
        payload: { name: "Three", admin_email: "x@three.example.com", admin_password: "Correct-Horse-9" }
      }).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RoleMissing")
      // A name must say something, and not look like a tenant id (sign-in takes either).
      const server = yield* TestServer
      const admin = yield* server.admin
      const cookie = `Service-Token=${yield* admin.sessionToken}`
      for (const name of ["   ", other.tenant.id]) {
        const bad = yield* http(
          "/api/admin/tenants",
          json("POST", { name, admin_email: "x@four.example.com", admin_password: "Correct-Horse-9" }, { cookie })
        )
        assert.strictEqual(bad.status, 400, name)
        assert.match(bad.body.error, /^Invalid request body: name: must not/)
      }
      const theirUsers = yield* other.client.api.admin.listUsers()
      assert.deepStrictEqual(theirUsers.users.map((u) => u.email), [other.email])
      const theirSpaces = yield* other.client.api.admin.listSpaces()
      assert.isFalse(theirSpaces.spaces.some((s) => s.code === "sales"))
      const mine = (yield* admin.api.admin.listUsers()).users[0]
      const crossTenant = yield* other.client.api.admin.updateUser({
        params: { id: mine.id },
        payload: { blocked: true }
      }).pipe(Effect.flip)
      assert.strictEqual(crossTenant._tag, "NotFound")
    }))

  it.effect("assigns Space Admins: an r_user becomes r_space_admin; unknown user or space is 404", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const user = yield* admin.api.admin.createUser({
        payload: { email: "spaceadmin@example.com", nombre: "SA", password: "Correct-Horse-9", role_id: "r_user" }
      })
      const space = yield* admin.api.admin.createSpace({ payload: { code: "support", name: "Support" } })
      const assignment = yield* admin.api.spaceAdmin.assign({ payload: { user_id: user.id, space_id: space.id } })
      assert.strictEqual(assignment.space_code, "support")
      const again = yield* admin.api.spaceAdmin.assign({ payload: { user_id: user.id, space_id: space.id } })
      assert.strictEqual(again.id, assignment.id)
      const { assignments } = yield* admin.api.spaceAdmin.list()
      assert.deepStrictEqual(assignments.filter((a) => a.user_id === user.id).map((a) => a.space_id), [space.id])
      const promoted = (yield* admin.api.admin.listUsers()).users.find((u) => u.id === user.id)!
      assert.strictEqual(promoted.role_id, "r_space_admin")
      const unknown = yield* admin.api.spaceAdmin.assign({
        payload: { user_id: crypto.randomUUID(), space_id: space.id }
      }).pipe(Effect.flip)
      assert.strictEqual(unknown._tag, "NotFound")
      // A Security Officer keeps their one role: 409, nothing assigned, the role unchanged.
      const officer = yield* admin.api.admin.createUser({
        payload: {
          email: "officer-sa@example.com",
          nombre: "SO",
          password: "Correct-Horse-9",
          role_id: "r_security_officer"
        }
      })
      const refused = yield* admin.api.spaceAdmin.assign({ payload: { user_id: officer.id, space_id: space.id } })
        .pipe(Effect.flip)
      assert.strictEqual(refused._tag, "Conflict")
      assert.match(
        refused._tag === "Conflict" ? refused.error : "",
        /Security Officer.*change their role to r_space_admin first/
      )
      assert.isFalse((yield* admin.api.spaceAdmin.list()).assignments.some((a) => a.user_id === officer.id))
      const still = (yield* admin.api.admin.listUsers()).users.find((u) => u.id === officer.id)!
      assert.strictEqual(still.role_id, "r_security_officer")
    }))
})

layer(testServer(), serverSuite)("GET /api/audit/verify", (it) => {
  it.effect("checks both hash chains and finds a row altered directly in SQL", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.admin.createSpace({ payload: { code: "audited", name: "Audited" } })
      yield* admin.api.keys.create({ payload: { name: "audited key", scopes: ["chat"] } })
      const clean = yield* admin.api.audit.verify()
      assert.strictEqual(clean.entries_invalid, 0)
      assert.isNull(clean.first_invalid_id)
      assert.isTrue(clean.chains.audit_logs.entries_checked >= 2)
      assert.isTrue(clean.chains.admin_audit_log.entries_checked >= 1)
      assert.strictEqual(
        clean.entries_checked,
        clean.chains.audit_logs.entries_checked + clean.chains.admin_audit_log.entries_checked
      )

      const sql = yield* SqlClient.SqlClient
      const [target] = yield* sql<
        { id: string }
      >`SELECT id FROM audit_logs WHERE event = 'key.created' ORDER BY seq LIMIT 1`
      yield* sql`UPDATE audit_logs SET data = jsonb_set(data, '{name}', '"tampered"') WHERE id = ${target.id}`
      const tampered = yield* admin.api.audit.verify()
      assert.strictEqual(tampered.entries_invalid, 1)
      assert.strictEqual(tampered.first_invalid_id, target.id)
      assert.strictEqual(tampered.chains.admin_audit_log.entries_invalid, 0)
    }))

  it.effect("appends concurrent changes without forking the chain", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => admin.api.admin.createSpace({ payload: { code: `concurrent-${i}`, name: `Concurrent ${i}` } }),
        { concurrency: "unbounded" }
      )
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ seq: string | number }>`
        SELECT seq FROM admin_audit_log WHERE tenant_id = (SELECT tenant_id FROM users WHERE email = ${adminEmail}) ORDER BY seq`
      assert.deepStrictEqual(rows.map((row) => Number(row.seq)), rows.map((_, i) => i + 1))
      const report = yield* admin.api.audit.verify()
      assert.strictEqual(report.chains.admin_audit_log.entries_invalid, 0)
    }))

  it.effect("answers a Security Officer, and refuses an r_admin with 403", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.admin.createUser({
        payload: {
          email: "officer@example.com",
          nombre: "Officer",
          password: "Correct-Horse-9",
          role_id: "r_security_officer"
        }
      })
      yield* admin.api.admin.createUser({
        payload: { email: "plainadmin@example.com", nombre: "Admin", password: "Correct-Horse-9", role_id: "r_admin" }
      })
      const officer = yield* signIn("officer@example.com", "Correct-Horse-9")
      const report = yield* officer.api.audit.verify()
      assert.isTrue(report.entries_checked > 0)
      const plainAdmin = yield* signIn("plainadmin@example.com", "Correct-Horse-9")
      const refused = yield* plainAdmin.api.audit.verify().pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RoleMissing")
      assert.match(messageOf(refused), /Security Officer/)
    }))
})
