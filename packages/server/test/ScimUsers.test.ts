import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  EnterpriseUrn,
  filter,
  GroupUrn,
  isScimError,
  ListUrn,
  oktaUser,
  patchOp,
  type ScimClient,
  scimClient,
  unique,
  UserUrn
} from "./ScimClient.ts"
import {
  adminClient,
  adminEmail,
  createKey,
  http,
  json,
  layer as testServer,
  secondTenant,
  serverSuite,
  signIn,
  TestServer
} from "./TestServer.ts"

/** Creates a user through SCIM and returns its representation. */
const provision = (scim: ScimClient, userName = `user-${unique()}@example.com`, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const created = yield* scim.post("/Users", oktaUser(userName, extra))
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body as Record<string, any> & { id: string; userName: string }
  })

const login = (email: string, password = "Provisioned-Passw0rd!") =>
  http("/api/auth/login", json("POST", { email, password }))

const auditOf = (target: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<
        { event: string; actor: string; data: any }
      >`SELECT event, actor, data FROM admin_audit_log WHERE target = ${target} ORDER BY seq`
  )

layer(testServer(), serverSuite)("SCIM Users: create, read, replace, delete", (it) => {
  it.effect("POST /Users creates the tenant's user: 201, Location, ETag, scim+json, password never returned", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const userName = `ada-${unique()}@example.com`
      const created = yield* scim.post(
        "/Users",
        oktaUser(userName, {
          [EnterpriseUrn]: {
            employeeNumber: 701984,
            department: "Engineering",
            manager: { value: "26118915-6090-4610-87e4-49d8ca9f808d" }
          },
          "urn:example:custom:2.0:User": { favouriteColour: "green" },
          unknownAttribute: { nested: true },
          title: "Analyst"
        })
      )
      assert.strictEqual(created.status, 201)
      assert.match(created.headers.get("content-type") ?? "", /^application\/scim\+json/)
      const user = created.body
      assert.strictEqual(created.headers.get("location"), user.meta.location)
      assert.strictEqual(created.headers.get("etag"), user.meta.version)
      assert.match(user.meta.version, /^W\/"[0-9a-f]{32}"$/)
      assert.match(user.meta.location, new RegExp(`/v1/scim/Users/${user.id}$`))
      assert.deepStrictEqual(user.schemas, [UserUrn, EnterpriseUrn])
      assert.strictEqual(user.userName, userName)
      assert.deepStrictEqual(user.name, { formatted: "Ada Lovelace", givenName: "Ada", familyName: "Lovelace" })
      assert.strictEqual(user.displayName, "Ada Lovelace")
      assert.strictEqual(user.title, "Analyst")
      assert.strictEqual(user.active, true)
      assert.deepStrictEqual(user[EnterpriseUrn], {
        employeeNumber: "701984",
        department: "Engineering",
        manager: { value: "26118915-6090-4610-87e4-49d8ca9f808d" }
      })
      assert.strictEqual(user.meta.resourceType, "User")
      for (const absent of ["password", "unknownAttribute", "urn:example:custom:2.0:User", "groups"]) {
        assert.notProperty(user, absent)
      }
      // The same user as on the admin surface, with the default role.
      const admin = yield* adminClient
      const listed = (yield* admin.api.admin.listUsers()).users.find((candidate) => candidate.id === user.id)!
      assert.deepInclude(listed, { email: userName, nombre: "Ada Lovelace", role_id: "r_user", active: true })
      const read = yield* scim.get(`/Users/${user.id}`)
      assert.deepStrictEqual(read.body, user)
      assert.strictEqual(read.headers.get("etag"), user.meta.version)
      assert.strictEqual((yield* login(userName)).status, 200)
    }))

  it.effect("every user has name.formatted: the provider's own, else the given and family names, else the display name", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const admin = yield* adminClient
      const surface = yield* admin.api.admin.createUser({
        payload: {
          email: `surface-${unique()}@example.com`,
          nombre: "Grace Hopper",
          password: "Correct-Horse-9",
          role_id: "r_user"
        }
      })
      assert.deepStrictEqual((yield* scim.get(`/Users/${surface.id}`)).body.name, { formatted: "Grace Hopper" })

      const own = yield* provision(scim, `own-${unique()}@example.com`, {
        name: { formatted: "Dr. Ada King", givenName: "Ada", familyName: "Lovelace" }
      })
      assert.strictEqual(own.name.formatted, "Dr. Ada King")
      const renamed = yield* scim.patch(
        `/Users/${own.id}`,
        patchOp({ op: "replace", path: "name.givenName", value: "Augusta" })
      )
      assert.deepStrictEqual(renamed.body.name, {
        formatted: "Dr. Ada King",
        givenName: "Augusta",
        familyName: "Lovelace"
      })
    }))

  it.effect("a duplicate userName (in any case) or a taken email answers 409 uniqueness", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const again = yield* scim.post(
        "/Users",
        oktaUser(user.userName.toUpperCase(), { emails: [{ value: `else-${unique()}@example.com`, primary: true }] })
      )
      assert.isTrue(isScimError(again, 409))
      assert.strictEqual(again.body.scimType, "uniqueness")
      assert.match(again.body.detail, /already taken/)
      const sameEmail = yield* scim.post(
        "/Users",
        oktaUser(`other-${unique()}`, { emails: [{ value: user.userName, primary: true }] })
      )
      assert.isTrue(isScimError(sameEmail, 409))
      assert.match(sameEmail.body.detail, /sign-in email of another user/)
      // The bootstrap admin's userName is their email.
      const admin = yield* scim.post("/Users", oktaUser(adminEmail))
      assert.isTrue(isScimError(admin, 409))
    }))

  it.effect("concurrent creations of one userName: exactly one 201, the others 409", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const userName = `race-${unique()}@example.com`
      const results = yield* Effect.all(
        Array.from({ length: 5 }, () => scim.post("/Users", oktaUser(userName, { password: undefined }))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(results.map((result) => result.status).sort(), [201, 409, 409, 409, 409])
      const listed = yield* scim.get(`/Users${filter(`userName eq "${userName}"`)}`)
      assert.strictEqual(listed.body.totalResults, 1)
    }))

  it.effect("invalid values answer 400 invalidValue: no userName, active \"maybe\", a password the policy refuses, no email at all; a malformed structure invalidSyntax", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const noName = yield* scim.post("/Users", {
        schemas: [UserUrn],
        emails: [{ value: `x-${unique()}@example.com` }]
      })
      assert.isTrue(isScimError(noName, 400))
      assert.strictEqual(noName.body.scimType, "invalidValue")
      assert.match(noName.body.detail, /userName is required/)
      const badActive = yield* scim.post("/Users", oktaUser(`a-${unique()}@example.com`, { active: "maybe" }))
      assert.strictEqual(badActive.body.scimType, "invalidValue")
      assert.match(badActive.body.detail, /active/)
      const weak = yield* scim.post("/Users", oktaUser(`w-${unique()}@example.com`, { password: "short" }))
      assert.isTrue(isScimError(weak, 400))
      assert.strictEqual(weak.body.scimType, "invalidValue")
      assert.match(weak.body.detail, /^Password must have at least 12 characters/)
      const noEmail = yield* scim.post("/Users", { schemas: [UserUrn], userName: `jdoe${unique()}` })
      assert.strictEqual(noEmail.body.scimType, "invalidValue")
      assert.match(noEmail.body.detail, /needs an email address/)
      // A body whose structure does not match the User schema is invalidSyntax.
      const badName = yield* scim.post("/Users", oktaUser(`n-${unique()}@example.com`, { name: "Ada" }))
      assert.isTrue(isScimError(badName, 400))
      assert.strictEqual(badName.body.scimType, "invalidSyntax")
      assert.match(badName.body.detail, /name/)
    }))

  it.effect("POST and PUT need schemas listing the resource's core URN: none, or the Group URN, is 400 invalidSyntax naming it", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const userName = `s-${unique()}@example.com`
      const { schemas: _schemas, ...withoutSchemas } = oktaUser(userName)
      const refusals = [
        yield* scim.post("/Users", withoutSchemas),
        yield* scim.post("/Users", { ...withoutSchemas, schemas: [GroupUrn] }),
        yield* scim.post("/Users", { ...withoutSchemas, schemas: "urn:ietf:params:scim:schemas:core:2.0:User" }),
        yield* scim.put(`/Users/${user.id}`, { ...oktaUser(user.userName), schemas: undefined }),
        yield* scim.put(`/Users/${user.id}`, { ...oktaUser(user.userName), schemas: [EnterpriseUrn] })
      ]
      for (const refused of refusals) {
        assert.isTrue(isScimError(refused, 400), JSON.stringify(refused.body))
        assert.strictEqual(refused.body.scimType, "invalidSyntax")
        assert.include(refused.body.detail, UserUrn)
      }
      const groups = [
        yield* scim.post("/Groups", { displayName: `No schemas ${unique()}` }),
        yield* scim.post("/Groups", { schemas: [UserUrn], displayName: `User URN ${unique()}` })
      ]
      for (const refused of groups) {
        assert.isTrue(isScimError(refused, 400), JSON.stringify(refused.body))
        assert.strictEqual(refused.body.scimType, "invalidSyntax")
        assert.include(refused.body.detail, GroupUrn)
      }
      // Nothing was created or changed; the URN is compared in any case, extensions may follow it.
      assert.strictEqual((yield* scim.get(`/Users${filter(`userName eq "${userName}"`)}`)).body.totalResults, 0)
      assert.strictEqual((yield* scim.get(`/Users/${user.id}`)).body.userName, user.userName)
      const anyCase = yield* scim.post("/Users", { ...withoutSchemas, schemas: [UserUrn.toUpperCase(), EnterpriseUrn] })
      assert.strictEqual(anyCase.status, 201, JSON.stringify(anyCase.body))
    }))

  it.effect("a value of the wrong type is 400 invalidValue in POST and PUT alike; numbers are text only in the enterprise extension", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      // Attributes the contract leaves open, validated by the service (the typed ones fail decoding: invalidSyntax).
      for (const extra of [{ title: 5 }, { nickName: true }, { phoneNumbers: "555-1234" }, { locale: ["en-US"] }]) {
        const created = yield* scim.post("/Users", oktaUser(`t-${unique()}@example.com`, extra))
        assert.isTrue(isScimError(created, 400), `${JSON.stringify(extra)}: ${JSON.stringify(created.body)}`)
        assert.strictEqual(created.body.scimType, "invalidValue", JSON.stringify(extra))
        const replaced = yield* scim.put(`/Users/${user.id}`, oktaUser(user.userName, extra))
        assert.isTrue(isScimError(replaced, 400), `${JSON.stringify(extra)}: ${JSON.stringify(replaced.body)}`)
      }
      assert.isUndefined((yield* scim.get(`/Users/${user.id}`)).body.title)
    }))

  it.effect("a user provisioned without a password cannot sign in until one is set", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim, undefined, { password: undefined })
      assert.strictEqual((yield* login(user.userName)).status, 401)
      const set = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", value: { password: "Provisioned-Passw0rd!" } })
      )
      assert.strictEqual(set.status, 200)
      assert.notProperty(set.body, "password")
      assert.strictEqual((yield* login(user.userName)).status, 200)
    }))

  it.effect("GET /Users/{id}: an unknown id, a malformed id and another tenant's user all answer 404", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      for (const id of [crypto.randomUUID(), "not-a-uuid", "1' OR '1'='1"]) {
        const missing = yield* scim.get(`/Users/${encodeURIComponent(id)}`)
        assert.isTrue(isScimError(missing, 404), JSON.stringify(missing.body))
      }
      // Another tenant's SCIM key sees nothing of this tenant.
      const other = yield* secondTenant()
      const otherKey = yield* createKey(["scim"], { as: other.client })
      const headers = { authorization: `Bearer ${otherKey.key}`, "content-type": "application/scim+json" }
      for (
        const init of [{ method: "GET" }, { method: "PUT", body: JSON.stringify(oktaUser(user.userName)) }, {
          method: "PATCH",
          body: JSON.stringify(patchOp({ op: "replace", value: { active: false } }))
        }, { method: "DELETE" }]
      ) {
        const result = yield* http(`/v1/scim/Users/${user.id}`, { ...init, headers })
        assert.isTrue(isScimError(result, 404), `${init.method}: ${result.status}`)
      }
      const listed = yield* http(`/v1/scim/Users${filter(`userName eq "${user.userName}"`)}`, { headers })
      assert.strictEqual(listed.body.totalResults, 0)
      const group = yield* http("/v1/scim/Groups", {
        method: "POST",
        headers,
        body: JSON.stringify({ schemas: [GroupUrn], displayName: "Theirs", members: [{ value: user.id }] })
      })
      assert.isTrue(isScimError(group, 400))
      assert.strictEqual(group.body.scimType, "invalidValue")
      assert.strictEqual((yield* scim.get(`/Users/${user.id}`)).body.active, true)
    }))

  it.effect("PUT /Users/{id} replaces the whole user: attributes left out are cleared", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim, undefined, { title: "Analyst", nickName: "Ada" })
      const replaced = yield* scim.put(`/Users/${user.id}`, {
        schemas: [UserUrn],
        userName: user.userName,
        name: { givenName: "Augusta", familyName: "King" },
        emails: [{ value: user.userName, primary: true, type: "work" }],
        active: true
      })
      assert.strictEqual(replaced.status, 200)
      assert.strictEqual(replaced.body.name.givenName, "Augusta")
      assert.strictEqual(replaced.body.displayName, "Augusta King")
      assert.notProperty(replaced.body, "title")
      assert.notProperty(replaced.body, "nickName")
      assert.notProperty(replaced.body, "externalId")
      assert.notStrictEqual(replaced.body.meta.version, user.meta.version)
      assert.strictEqual(replaced.headers.get("etag"), replaced.body.meta.version)
    }))

  it.effect("If-Match: the current version writes, a stale one answers 412 and changes nothing, * always matches", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const first = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", path: "title", value: "One" }), {
        "if-match": user.meta.version
      })
      assert.strictEqual(first.status, 200)
      const stale = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", path: "title", value: "Two" }), {
        "if-match": user.meta.version
      })
      assert.isTrue(isScimError(stale, 412))
      assert.match(stale.body.detail, /has changed/)
      const staleDelete = yield* scim.delete(`/Users/${user.id}`, { "if-match": user.meta.version })
      assert.isTrue(isScimError(staleDelete, 412))
      const stalePut = yield* scim.put(`/Users/${user.id}`, oktaUser(user.userName), { "if-match": user.meta.version })
      assert.isTrue(isScimError(stalePut, 412))
      assert.strictEqual((yield* scim.get(`/Users/${user.id}`)).body.title, "One")
      const any = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", path: "title", value: "Three" }), {
        "if-match": "*"
      })
      assert.strictEqual(any.body.title, "Three")
      // A read does not change the version; the ETag header is the version.
      const read = yield* scim.get(`/Users/${user.id}`)
      assert.strictEqual(read.headers.get("etag"), any.body.meta.version)
      const strongForm = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", path: "title", value: "Four" }),
        { "if-match": any.body.meta.version.slice(2) }
      )
      assert.strictEqual(strongForm.status, 200)
    }))

  it.effect("DELETE /Users/{id} answers 204, then 404; the user is gone from the admin surface and their sessions end", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const session = yield* signIn(user.userName, "Provisioned-Passw0rd!")
      assert.strictEqual((yield* session.api.auth.me()).email, user.userName)
      const deleted = yield* scim.delete(`/Users/${user.id}`)
      assert.strictEqual(deleted.status, 204)
      assert.strictEqual(deleted.body, "")
      assert.isTrue(isScimError(yield* scim.get(`/Users/${user.id}`), 404))
      assert.isTrue(isScimError(yield* scim.delete(`/Users/${user.id}`), 404))
      const me = yield* session.api.auth.me().pipe(Effect.flip)
      assert.strictEqual(me._tag, "Unauthenticated")
      const admin = yield* adminClient
      assert.isUndefined((yield* admin.api.admin.listUsers()).users.find((candidate) => candidate.id === user.id))
      // The same userName can be provisioned again.
      const again = yield* scim.post("/Users", oktaUser(user.userName))
      assert.strictEqual(again.status, 201)
    }))

  it.effect("a key's own owner cannot be deleted or deactivated through it (400 mutability): the key would stop", () =>
    Effect.gen(function*() {
      // Every SCIM key's owner is an active administrator, so this also keeps the tenant's last one.
      const scim = yield* scimClient()
      const listed = yield* scim.get(`/Users${filter(`userName eq "${adminEmail}"`)}`)
      const admin = listed.body.Resources[0]
      assert.strictEqual(admin.active, true)
      const deleted = yield* scim.delete(`/Users/${admin.id}`)
      assert.isTrue(isScimError(deleted, 400))
      assert.strictEqual(deleted.body.scimType, "mutability")
      const deactivated = yield* scim.patch(`/Users/${admin.id}`, patchOp({ op: "replace", value: { active: false } }))
      assert.strictEqual(deactivated.body.scimType, "mutability")
      assert.match(deactivated.body.detail, /owns this SCIM key and cannot be deactivated through it/)
      assert.strictEqual((yield* scim.get(`/Users/${admin.id}`)).body.active, true)
      // The same change through another administrator's key goes through (the owner is not the last admin then).
      const other = yield* adminClient.pipe(
        Effect.flatMap((as) =>
          as.api.admin.createUser({
            payload: {
              email: `second-admin-${unique()}@example.com`,
              nombre: "Second",
              password: "Correct-Horse-9",
              role_id: "r_superadmin"
            }
          })
        )
      )
      const theirs = yield* scimClient({ as: yield* signIn(other.email, "Correct-Horse-9") })
      const renamed = yield* theirs.patch(`/Users/${admin.id}`, patchOp({ op: "replace", value: { title: "Founder" } }))
      assert.strictEqual(renamed.status, 200)
    }))
})

layer(testServer(), serverSuite)("SCIM Users: a key acts with its owner's authority", (it) => {
  it.effect("an r_admin's SCIM key cannot replace, patch or delete an r_superadmin (403); it still manages other users", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const adminRole = yield* admin.api.admin.createUser({
        payload: {
          email: `r-admin-${unique()}@example.com`,
          nombre: "Ops",
          password: "Correct-Horse-9",
          role_id: "r_admin"
        }
      })
      const scim = yield* scimClient({ as: yield* signIn(adminRole.email, "Correct-Horse-9") })
      const listed = yield* scim.get(`/Users${filter(`userName eq "${adminEmail}"`)}`)
      const superadmin = listed.body.Resources[0]

      const patched = yield* scim.patch(
        `/Users/${superadmin.id}`,
        patchOp({ op: "replace", value: { password: "Hijacked0Password99" } })
      )
      assert.isTrue(isScimError(patched, 403), JSON.stringify(patched.body))
      assert.match(patched.body.detail, /owner \(r_admin\) cannot change .* r_superadmin/)
      const replaced = yield* scim.put(
        `/Users/${superadmin.id}`,
        oktaUser(adminEmail, { active: false, password: "Hijacked0Password99" })
      )
      assert.isTrue(isScimError(replaced, 403))
      assert.isTrue(isScimError(yield* scim.delete(`/Users/${superadmin.id}`), 403))
      // Nothing changed: the superadmin still signs in with their own password and is active.
      assert.strictEqual((yield* login(adminEmail, "Hijacked0Password99")).status, 401)
      const after = yield* scim.get(`/Users/${superadmin.id}`)
      assert.strictEqual(after.body.active, true)
      assert.strictEqual(after.body.meta.version, superadmin.meta.version)

      // Users the owner could change on the admin surface stay the key's to manage.
      const user = yield* provision(scim)
      const deactivated = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", value: { active: false } }))
      assert.strictEqual(deactivated.status, 200)
      assert.strictEqual((yield* scim.delete(`/Users/${user.id}`)).status, 204)
    }))
})

layer(testServer(), serverSuite)("SCIM Users: deactivation and the platform", (it) => {
  it.effect("PATCH active false ends a live session at once; sign-in answers 403; reactivation lets the user sign in again", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const session = yield* signIn(user.userName, "Provisioned-Passw0rd!")
      assert.strictEqual((yield* session.api.auth.me()).user_id, user.id)
      const off = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", value: { active: false } }))
      assert.strictEqual(off.body.active, false)
      const me = yield* session.api.auth.me().pipe(Effect.flip)
      assert.strictEqual(me._tag, "Unauthenticated")
      const refused = yield* login(user.userName)
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body._tag, "AccountBlocked")
      assert.match(refused.body.error, /deactivated/)
      // A wrong password still answers 401: the state of the account is told only to who knows the password.
      assert.strictEqual((yield* login(user.userName, "Wrong-Passw0rd-123")).status, 401)
      const admin = yield* adminClient
      assert.strictEqual(
        (yield* admin.api.admin.listUsers()).users.find((candidate) => candidate.id === user.id)!.active,
        false
      )
      const on = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", path: "active", value: true }))
      assert.strictEqual(on.body.active, true)
      assert.strictEqual((yield* login(user.userName)).status, 200)
    }))

  it.effect("Okta deactivates with PUT of the whole user and active false", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const session = yield* signIn(user.userName, "Provisioned-Passw0rd!")
      const { meta: _meta, id: _id, ...whole } = user
      const put = yield* scim.put(`/Users/${user.id}`, { ...whole, active: false })
      assert.strictEqual(put.status, 200)
      assert.strictEqual(put.body.active, false)
      assert.strictEqual((yield* session.api.auth.me().pipe(Effect.flip))._tag, "Unauthenticated")
      assert.strictEqual((yield* login(user.userName)).status, 403)
    }))

  it.effect("every SCIM change is in the admin_audit_log chain with actor key:<id>, and the chain verifies", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", path: "title", value: "Lead" }))
      yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "replace", value: { active: false } }))
      yield* scim.put(`/Users/${user.id}`, oktaUser(user.userName, { active: true, password: "Another-Passw0rd-9" }))
      yield* scim.delete(`/Users/${user.id}`)
      const entries = yield* auditOf(`user:${user.id}`)
      assert.deepStrictEqual(entries.map((entry) => entry.event), [
        "scim.user.created",
        "scim.user.updated",
        "scim.user.deactivated",
        "scim.user.reactivated",
        "scim.user.deleted"
      ])
      for (const entry of entries) assert.strictEqual(entry.actor, `key:${scim.keyId}`)
      assert.deepStrictEqual(entries[1].data.changed, ["title"])
      assert.isTrue(entries[2].data.sessions_ended)
      assert.include(entries[3].data.changed, "password")
      assert.notInclude(JSON.stringify(entries), "Another-Passw0rd-9")
      const admin = yield* adminClient
      const verified = yield* admin.api.audit.verify()
      assert.strictEqual(verified.entries_invalid, 0)
    }))

  it.effect("SCIM calls count as data endpoints (300/min); a 429 is a SCIM error with Retry-After and no scimType", () =>
    Effect.gen(function*() {
      const generous = yield* scimClient({ rate_limit_rpm: 1000 })
      const first = yield* generous.get("/ServiceProviderConfig")
      assert.strictEqual(first.headers.get("x-ratelimit-limit"), "300")
      const tight = yield* scimClient({ rate_limit_rpm: 2 })
      assert.strictEqual((yield* tight.get("/Users?count=1")).status, 200)
      assert.strictEqual((yield* tight.get("/Users?count=1")).status, 200)
      const limited = yield* tight.get("/Users?count=1")
      assert.isTrue(isScimError(limited, 429))
      // RFC 7644's tooMany is a 400 for a filter yielding too many results, not a rate limit.
      assert.notProperty(limited.body, "scimType")
      assert.strictEqual(limited.body._tag, "ScimRateLimited")
      assert.match(limited.body.detail, /Rate limit of 2 requests per minute exceeded/)
      assert.match(limited.headers.get("retry-after") ?? "", /^\d+$/)
      assert.isAbove(Number(limited.headers.get("retry-after")), 0)
    }))

  it.effect("401 without or with a bad key, 403 with a key lacking the scim scope, both as SCIM errors", () =>
    Effect.gen(function*() {
      const anonymous = yield* http("/v1/scim/Users")
      assert.isTrue(isScimError(anonymous, 401))
      const bad = yield* http("/v1/scim/Users", { headers: { authorization: `Bearer sk_live_${"0".repeat(64)}` } })
      assert.isTrue(isScimError(bad, 401))
      assert.strictEqual(bad.body.detail, "Invalid or revoked API key.")
      const { key } = yield* createKey(["agents"])
      const scopeless = yield* http("/v1/scim/Users", { headers: { authorization: `Bearer ${key}` } })
      assert.isTrue(isScimError(scopeless, 403))
      assert.match(scopeless.body.detail, /scope `scim`/)
    }))

  it.effect("the derived SDK client reads SCIM resources with their ETag", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const server = yield* TestServer
      const client = yield* server.client({ apiKey: scim.key })
      const read = yield* client.api.scim.getUser({ params: { id: user.id }, query: {} })
      assert.strictEqual(read.body.userName, user.userName)
      assert.strictEqual(read.headers.etag, user.meta.version)
      const config = yield* client.api.scim.getServiceProviderConfig()
      assert.isTrue(config.patch.supported)
      const missing = yield* client.api.scim.getUser({ params: { id: crypto.randomUUID() }, query: {} }).pipe(
        Effect.flip
      )
      assert.strictEqual(missing._tag, "ScimNotFound")
      const list = yield* client.api.scim.listUsers({ query: { filter: `userName eq "${user.userName}"` } })
      assert.deepStrictEqual(list.schemas, [ListUrn])
      assert.strictEqual(list.totalResults, 1)
    }))
})
