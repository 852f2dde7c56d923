import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  filter,
  GroupUrn,
  isScimError,
  oktaUser,
  patchOp,
  type ScimClient,
  scimClient,
  SearchRequestUrn,
  unique
} from "./ScimClient.ts"
import {
  adminClient,
  createKey,
  http,
  json,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  sessionCookie,
  signIn
} from "./TestServer.ts"

const provision = (scim: ScimClient) =>
  Effect.gen(function*() {
    const created = yield* scim.post("/Users", oktaUser(`member-${unique()}@example.com`))
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body as { id: string; userName: string; displayName: string }
  })

const createGroup = (scim: ScimClient, displayName: string, members: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const created = yield* scim.post("/Groups", {
      schemas: [GroupUrn],
      displayName,
      members: members.map((value) => ({ value }))
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body as {
      id: string
      displayName: string
      members?: Array<{ value: string }>
      meta: { version: string }
    }
  })

const memberIds = (group: { members?: ReadonlyArray<{ value: string }> }) =>
  (group.members ?? []).map((member) => member.value).sort()

const roleOf = (id: string) =>
  Effect.gen(function*() {
    const admin = yield* adminClient
    return (yield* admin.api.admin.listUsers()).users.find((user) => user.id === id)!.role_id
  })

layer(testServer(), serverSuite)("SCIM Groups", (it) => {
  it.effect("POST /Groups creates a group with its members: 201, Location, ETag; the members carry display and $ref", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const [a, b] = [yield* provision(scim), yield* provision(scim)]
      const created = yield* scim.post("/Groups", {
        schemas: [GroupUrn],
        displayName: `Team ${unique()}`,
        externalId: "okta-00g1",
        members: [{ value: a.id, display: "ignored" }, { value: b.id }]
      })
      assert.strictEqual(created.status, 201)
      assert.match(created.headers.get("content-type") ?? "", /^application\/scim\+json/)
      assert.strictEqual(created.headers.get("location"), created.body.meta.location)
      assert.strictEqual(created.headers.get("etag"), created.body.meta.version)
      assert.deepStrictEqual(created.body.schemas, [GroupUrn])
      assert.strictEqual(created.body.externalId, "okta-00g1")
      assert.deepStrictEqual(memberIds(created.body), [a.id, b.id].sort())
      const member = created.body.members.find((m: { value: string }) => m.value === a.id)
      assert.strictEqual(member.display, a.displayName)
      assert.match(member.$ref, new RegExp(`/v1/scim/Users/${a.id}$`))
      const user = yield* scim.get(`/Users/${a.id}`)
      assert.deepStrictEqual(user.body.groups.map((g: { value: string }) => g.value), [created.body.id])
    }))

  it.effect("a taken displayName (any case) is 409 uniqueness; members that are not users of the tenant are 400 invalidValue", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const name = `Dup ${unique()}`
      yield* createGroup(scim, name)
      const again = yield* scim.post("/Groups", { schemas: [GroupUrn], displayName: name.toUpperCase() })
      assert.isTrue(isScimError(again, 409))
      assert.strictEqual(again.body.scimType, "uniqueness")
      const unknown = crypto.randomUUID()
      const missing = yield* scim.post("/Groups", {
        schemas: [GroupUrn],
        displayName: `G ${unique()}`,
        members: [{ value: unknown }, { value: "not-a-uuid" }]
      })
      assert.isTrue(isScimError(missing, 400))
      assert.strictEqual(missing.body.scimType, "invalidValue")
      assert.include(missing.body.detail, unknown)
      const nested = yield* scim.post("/Groups", {
        schemas: [GroupUrn],
        displayName: `G ${unique()}`,
        members: [{ value: (yield* provision(scim)).id, type: "Group" }]
      })
      assert.strictEqual(nested.body.scimType, "invalidValue")
      const noName = yield* scim.post("/Groups", { schemas: [GroupUrn], members: [] })
      assert.strictEqual(noName.body.scimType, "invalidValue")
      // Nothing half-written.
      const listed = yield* scim.get(`/Groups${filter(`displayName sw "G "`)}`)
      assert.strictEqual(listed.body.totalResults, 0)
    }))

  it.effect("GET /Groups filters on displayName, externalId and members.value; excludedAttributes=members keeps the version", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const name = `Filtered ${unique()}`
      const group = yield* createGroup(scim, name, [user.id])
      const byName = yield* scim.get(
        `/Groups${filter(`displayName eq "${name.toLowerCase()}"`)}&excludedAttributes=members`
      )
      assert.deepInclude(byName.body, { totalResults: 1, itemsPerPage: 1, startIndex: 1 })
      assert.notProperty(byName.body.Resources[0], "members")
      assert.strictEqual(byName.body.Resources[0].meta.version, group.meta.version)
      const byMember = yield* scim.get(`/Groups${filter(`members.value eq "${user.id}"`)}`)
      assert.deepStrictEqual(byMember.body.Resources.map((g: { id: string }) => g.id), [group.id])
      const byMemberPath = yield* scim.get(`/Groups${filter(`members[value eq "${user.id}"]`)}`)
      assert.strictEqual(byMemberPath.body.totalResults, 1)
      const byExternal = yield* scim.get(`/Groups${filter(`externalId eq "none-${unique()}"`)}`)
      assert.strictEqual(byExternal.body.totalResults, 0)
      const read = yield* scim.get(`/Groups/${group.id}?excludedAttributes=members`)
      assert.notProperty(read.body, "members")
      assert.strictEqual(read.headers.get("etag"), group.meta.version)
      assert.isTrue(isScimError(yield* scim.get(`/Groups/${crypto.randomUUID()}`), 404))
      assert.isTrue(isScimError(yield* scim.get(`/Groups${filter(`userName eq "x"`)}`), 400))
    }))

  it.effect("POST /Groups/.search answers what the GET answers; excludedAttributes [members] leaves them out", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const prefix = `Searched ${unique()}`
      const groups = [yield* createGroup(scim, `${prefix} b`, [user.id]), yield* createGroup(scim, `${prefix} a`)]
      const query = `displayName sw "${prefix}"`
      const listed = yield* scim.get(`/Groups${filter(query)}&sortBy=displayName&excludedAttributes=members`)
      const searched = yield* scim.post("/Groups/.search", {
        schemas: [SearchRequestUrn],
        filter: query,
        sortBy: "displayName",
        excludedAttributes: ["members"]
      })
      assert.strictEqual(searched.status, 200, JSON.stringify(searched.body))
      assert.deepStrictEqual(searched.body, listed.body)
      assert.deepStrictEqual(searched.body.Resources.map((g: { id: string }) => g.id), [groups[1].id, groups[0].id])
      for (const group of searched.body.Resources) assert.notProperty(group, "members")
      const byMember = yield* scim.post("/Groups/.search", { filter: `members.value eq "${user.id}"` })
      assert.deepStrictEqual(byMember.body.Resources.map((g: { id: string }) => g.id), [groups[0].id])
      assert.isTrue(isScimError(yield* scim.post("/Groups/.search", { filter: `userName eq "x"` }), 400))
    }))

  it.effect("PATCH /Groups: add members, remove one by filter, remove a list (Entra), remove all, rename with and without path", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const [a, b, c] = [yield* provision(scim), yield* provision(scim), yield* provision(scim)]
      const group = yield* createGroup(scim, `Patched ${unique()}`)
      const added = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "add", path: "members", value: [{ value: a.id }, { value: b.id }, { value: c.id }] })
      )
      assert.strictEqual(added.status, 200)
      assert.deepStrictEqual(memberIds(added.body), [a.id, b.id, c.id].sort())
      const removedOne = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "remove", path: `members[value eq "${a.id}"]` })
      )
      assert.deepStrictEqual(memberIds(removedOne.body), [b.id, c.id].sort())
      const removedList = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "Remove", path: "members", value: [{ value: b.id }] })
      )
      assert.deepStrictEqual(memberIds(removedList.body), [c.id])
      const renamed = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "Replace", path: "displayName", value: `Renamed ${group.displayName}` })
      )
      assert.strictEqual(renamed.body.displayName, `Renamed ${group.displayName}`)
      const okta = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "replace", value: { id: group.id, displayName: `Okta ${group.displayName}` } })
      )
      assert.strictEqual(okta.body.displayName, `Okta ${group.displayName}`)
      const removedAll = yield* scim.patch(`/Groups/${group.id}`, patchOp({ op: "remove", path: "members" }))
      assert.notProperty(removedAll.body, "members")
      const replaced = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "replace", path: "members", value: [{ value: a.id }] })
      )
      assert.deepStrictEqual(memberIds(replaced.body), [a.id])
      const bad = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "add", path: "members", value: [{ value: crypto.randomUUID() }] })
      )
      assert.strictEqual(bad.body.scimType, "invalidValue")
      const readOnly = yield* scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: "replace", path: "id", value: crypto.randomUUID() })
      )
      assert.strictEqual(readOnly.body.scimType, "mutability")
      assert.isTrue(
        isScimError(
          yield* scim.patch(`/Groups/${crypto.randomUUID()}`, patchOp({ op: "remove", path: "members" })),
          404
        )
      )
    }))

  it.effect("PATCH removes members by a filter on what a member returns: display (any case), type, value; another attribute is 400 invalidFilter", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const [a, b, c] = [yield* provision(scim), yield* provision(scim), yield* provision(scim)]
      const renamed = yield* scim.patch(
        `/Users/${b.id}`,
        patchOp({ op: "replace", path: "displayName", value: `Grace Hopper ${unique()}` })
      )
      const group = yield* createGroup(scim, `Filtered ${unique()}`, [a.id, b.id, c.id])
      const patch = (operation: Record<string, unknown>) => scim.patch(`/Groups/${group.id}`, patchOp(operation))
      const byDisplay = yield* patch({
        op: "remove",
        path: `members[display eq "${String(renamed.body.displayName).toUpperCase()}"]`
      })
      assert.strictEqual(byDisplay.status, 200, JSON.stringify(byDisplay.body))
      assert.deepStrictEqual(memberIds(byDisplay.body), [a.id, c.id].sort())
      const byValueAndDisplay = yield* patch({
        op: "remove",
        path: `${GroupUrn}:members[value eq "${a.id.toUpperCase()}" and display co "Lovelace"]`
      })
      assert.deepStrictEqual(memberIds(byValueAndDisplay.body), [c.id])
      // A filter matching nobody removes nobody: the member may already be gone (Okta retries).
      const nobody = yield* patch({ op: "remove", path: `members[display eq "Nobody at all"]` })
      assert.strictEqual(nobody.status, 200)
      assert.deepStrictEqual(memberIds(nobody.body), [c.id])
      for (const path of [`members[nope eq "x"]`, `members[value eq "${c.id}" or emails pr]`, `members[$ref pr]`]) {
        const refused = yield* patch({ op: "remove", path })
        assert.isTrue(isScimError(refused, 400), `${path}: ${JSON.stringify(refused.body)}`)
        assert.strictEqual(refused.body.scimType, "invalidFilter", path)
      }
      assert.deepStrictEqual(memberIds((yield* scim.get(`/Groups/${group.id}`)).body), [c.id])
      const byType = yield* patch({ op: "remove", path: `members[type eq "User"]` })
      assert.notProperty(byType.body, "members")
    }))

  it.effect("PATCH refuses a member without a value, or a displayName that is not a string: 400 invalidValue, nothing changes", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const member = yield* provision(scim)
      const group = yield* createGroup(scim, `Strict ${unique()}`, [member.id])
      const operations: ReadonlyArray<Record<string, unknown>> = [
        { op: "add", path: "members", value: [{ nope: 1 }] },
        { op: "add", path: "members", value: [{ value: member.id }, { display: "No id" }] },
        { op: "add", path: "members", value: [{ value: 5 }] },
        { op: "add", path: "members", value: member.id },
        { op: "replace", path: "members", value: [{}] },
        { op: "add", value: { members: [{ nope: 1 }] } },
        { op: "remove", path: "members", value: [{ display: "Ada" }] },
        { op: "replace", path: "displayName", value: 5 },
        { op: "replace", value: { displayName: 5 } },
        { op: "replace", path: "displayName", value: ["Strict"] }
      ]
      for (const operation of operations) {
        const result = yield* scim.patch(`/Groups/${group.id}`, patchOp(operation))
        assert.isTrue(isScimError(result, 400), `${JSON.stringify(operation)}: ${JSON.stringify(result.body)}`)
        assert.strictEqual(result.body.scimType, "invalidValue", JSON.stringify(operation))
      }
      const after = (yield* scim.get(`/Groups/${group.id}`)).body
      assert.strictEqual(after.displayName, group.displayName)
      assert.deepStrictEqual(memberIds(after), [member.id])
      assert.strictEqual(after.meta.version, group.meta.version)
    }))

  it.effect("PUT /Groups replaces name and members; DELETE answers 204, then 404; memberships go with it", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const [a, b] = [yield* provision(scim), yield* provision(scim)]
      const group = yield* createGroup(scim, `Put ${unique()}`, [a.id])
      const put = yield* scim.put(`/Groups/${group.id}`, {
        schemas: [GroupUrn],
        displayName: `${group.displayName} v2`,
        members: [{ value: b.id }]
      })
      assert.strictEqual(put.status, 200)
      assert.deepStrictEqual(memberIds(put.body), [b.id])
      assert.notProperty(put.body, "externalId")
      const stale = yield* scim.put(`/Groups/${group.id}`, { schemas: [GroupUrn], displayName: "x" }, {
        "if-match": group.meta.version
      })
      assert.isTrue(isScimError(stale, 412))
      const deleted = yield* scim.delete(`/Groups/${group.id}`)
      assert.strictEqual(deleted.status, 204)
      assert.isTrue(isScimError(yield* scim.get(`/Groups/${group.id}`), 404))
      assert.isTrue(isScimError(yield* scim.delete(`/Groups/${group.id}`), 404))
      assert.notProperty((yield* scim.get(`/Users/${b.id}`)).body, "groups")
    }))

  it.effect("concurrent PATCHes adding members lose none of them", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const users = yield* Effect.all(Array.from({ length: 8 }, () => provision(scim)))
      const group = yield* createGroup(scim, `Concurrent ${unique()}`)
      const results = yield* Effect.all(
        users.map((user) =>
          scim.patch(`/Groups/${group.id}`, patchOp({ op: "add", path: "members", value: [{ value: user.id }] }))
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(results.map((result) => result.status), users.map(() => 200))
      const read = yield* scim.get(`/Groups/${group.id}`)
      assert.deepStrictEqual(memberIds(read.body), users.map((user) => user.id).sort())
    }))

  it.effect("another tenant's groups answer 404 and never list", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const group = yield* createGroup(scim, `Mine ${unique()}`)
      const other = yield* secondTenant()
      const otherKey = yield* createKey(["scim"], { as: other.client })
      const headers = { authorization: `Bearer ${otherKey.key}`, "content-type": "application/scim+json" }
      for (const method of ["GET", "DELETE"]) {
        assert.isTrue(isScimError(yield* http(`/v1/scim/Groups/${group.id}`, { method, headers }), 404), method)
      }
      const patched = yield* http(`/v1/scim/Groups/${group.id}`, {
        method: "PATCH",
        headers,
        body: JSON.stringify(patchOp({ op: "remove", path: "members" }))
      })
      assert.isTrue(isScimError(patched, 404))
      const listed = yield* http(`/v1/scim/Groups${filter(`displayName eq "${group.displayName}"`)}`, { headers })
      assert.strictEqual(listed.body.totalResults, 0)
      // The same name is free in the other tenant.
      const theirs = yield* http("/v1/scim/Groups", {
        method: "POST",
        headers,
        body: JSON.stringify({ schemas: [GroupUrn], displayName: group.displayName })
      })
      assert.strictEqual(theirs.status, 201)
    }))

  it.effect("group changes are in the admin audit chain as the key", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const group = yield* createGroup(scim, `Audited ${unique()}`, [user.id])
      yield* scim.patch(`/Groups/${group.id}`, patchOp({ op: "remove", path: `members[value eq "${user.id}"]` }))
      yield* scim.delete(`/Groups/${group.id}`)
      const sql = yield* SqlClient.SqlClient
      const entries = yield* sql<{ event: string; actor: string; data: any }>`
        SELECT event, actor, data FROM admin_audit_log WHERE target = ${`group:${group.id}`} ORDER BY seq`
      assert.deepStrictEqual(entries.map((entry) => entry.event), [
        "scim.group.created",
        "scim.group.updated",
        "scim.group.deleted"
      ])
      for (const entry of entries) assert.strictEqual(entry.actor, `key:${scim.keyId}`)
      assert.deepStrictEqual(entries[0].data.members_added, [user.id])
      assert.deepStrictEqual(entries[1].data.members_removed, [user.id])
    }))
})

layer(testServer(), serverSuite)("SCIM role mappings (PUT /api/admin/scim/role-mappings)", (it) => {
  it.effect("admins read and replace the mappings; r_superadmin and a group mapped twice are 400; non-admins 403", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      assert.deepStrictEqual(yield* admin.api.scimRoleMappings.get(), { mappings: [] })
      const put = yield* admin.api.scimRoleMappings.put({
        payload: {
          mappings: [{ group_display_name: "Security", role_id: "r_security_officer" }, {
            group_display_name: "Admins",
            role_id: "r_admin"
          }]
        }
      })
      assert.deepStrictEqual(put.mappings.map((m) => m.group_display_name), ["Security", "Admins"])
      assert.deepStrictEqual(yield* admin.api.scimRoleMappings.get(), put)
      const superadmin = yield* admin.api.scimRoleMappings.put({
        payload: { mappings: [{ group_display_name: "Root", role_id: "r_superadmin" }] }
      }).pipe(Effect.flip)
      assert.strictEqual(superadmin._tag, "InvalidRequest")
      assert.match(messageOf(superadmin), /r_superadmin cannot be granted/)
      const twice = yield* admin.api.scimRoleMappings.put({
        payload: {
          mappings: [{ group_display_name: "Ops", role_id: "r_admin" }, {
            group_display_name: "OPS",
            role_id: "r_user"
          }]
        }
      }).pipe(Effect.flip)
      assert.match(messageOf(twice), /mapped twice/)
      const badRole = yield* http(
        "/api/admin/scim/role-mappings",
        json("PUT", { mappings: [{ group_display_name: "x", role_id: "r_root" }] }, {
          cookie: yield* sessionCookie(admin)
        })
      )
      assert.strictEqual(badRole.status, 400)
      assert.deepStrictEqual(yield* admin.api.scimRoleMappings.get(), put)
      // A plain user may not.
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      const plain = yield* signIn(user.userName, "Provisioned-Passw0rd!")
      const refused = yield* plain.api.scimRoleMappings.put({ payload: { mappings: [] } }).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RoleMissing")
      const key = yield* createKey(["scim"])
      const withKey = yield* http("/api/admin/scim/role-mappings", { headers: { authorization: `Bearer ${key.key}` } })
      assert.strictEqual(withKey.status, 403)
    }))

  it.effect("membership grants the mapped role on every change, ending the user's sessions; without a mapped group r_user", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const suffix = unique()
      yield* admin.api.scimRoleMappings.put({
        payload: {
          mappings: [
            { group_display_name: `Platform Admins ${suffix}`, role_id: "r_admin" },
            { group_display_name: `Space Admins ${suffix}`, role_id: "r_space_admin" }
          ]
        }
      })
      const scim = yield* scimClient()
      const user = yield* provision(scim)
      assert.strictEqual(yield* roleOf(user.id), "r_user")
      const session = yield* signIn(user.userName, "Provisioned-Passw0rd!")
      const spaceAdmins = yield* createGroup(scim, `space admins ${suffix}`, [user.id])
      assert.strictEqual(yield* roleOf(user.id), "r_space_admin")
      assert.strictEqual((yield* session.api.auth.me().pipe(Effect.flip))._tag, "Unauthenticated")
      // The strongest mapped role wins.
      const admins = yield* createGroup(scim, `Platform Admins ${suffix}`)
      yield* scim.patch(`/Groups/${admins.id}`, patchOp({ op: "add", path: "members", value: [{ value: user.id }] }))
      assert.strictEqual(yield* roleOf(user.id), "r_admin")
      const signedIn = yield* signIn(user.userName, "Provisioned-Passw0rd!")
      assert.strictEqual((yield* signedIn.api.auth.me()).role_id, "r_admin")
      yield* scim.patch(`/Groups/${admins.id}`, patchOp({ op: "remove", path: `members[value eq "${user.id}"]` }))
      assert.strictEqual(yield* roleOf(user.id), "r_space_admin")
      // A rename out of the mapping, and a deletion, recompute the members' roles.
      yield* scim.patch(
        `/Groups/${spaceAdmins.id}`,
        patchOp({ op: "replace", path: "displayName", value: `Former ${suffix}` })
      )
      assert.strictEqual(yield* roleOf(user.id), "r_user")
      yield* scim.patch(
        `/Groups/${spaceAdmins.id}`,
        patchOp({ op: "replace", path: "displayName", value: `Space Admins ${suffix}` })
      )
      assert.strictEqual(yield* roleOf(user.id), "r_space_admin")
      yield* scim.delete(`/Groups/${spaceAdmins.id}`)
      assert.strictEqual(yield* roleOf(user.id), "r_user")
      const sql = yield* SqlClient.SqlClient
      const changes = yield* sql<{ actor: string; data: any }>`
        SELECT actor, data FROM admin_audit_log WHERE target = ${`user:${user.id}`} AND event = 'scim.user.role_changed' ORDER BY seq`
      assert.deepStrictEqual(changes.map((change) => change.data.to), [
        "r_space_admin",
        "r_admin",
        "r_space_admin",
        "r_user",
        "r_space_admin",
        "r_user"
      ])
      for (const change of changes) assert.strictEqual(change.actor, `key:${scim.keyId}`)
    }))

  it.effect("changing the mappings applies them at once; users created on the admin surface keep their role", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const scim = yield* scimClient()
      const suffix = unique()
      const provisioned = yield* provision(scim)
      const manual = yield* admin.api.admin.createUser({
        payload: {
          email: `manual-${suffix}@example.com`,
          nombre: "Manual",
          password: "Manual-Passw0rd-1",
          role_id: "r_security_officer"
        }
      })
      yield* createGroup(scim, `Auditors ${suffix}`, [provisioned.id, manual.id])
      assert.strictEqual(yield* roleOf(provisioned.id), "r_user")
      const me = yield* admin.api.auth.me()
      yield* admin.api.scimRoleMappings.put({
        payload: { mappings: [{ group_display_name: `AUDITORS ${suffix}`, role_id: "r_admin" }] }
      })
      assert.strictEqual(yield* roleOf(provisioned.id), "r_admin")
      assert.strictEqual(yield* roleOf(manual.id), "r_security_officer")
      yield* admin.api.scimRoleMappings.put({ payload: { mappings: [] } })
      assert.strictEqual(yield* roleOf(provisioned.id), "r_user")
      const sql = yield* SqlClient.SqlClient
      const entries = yield* sql<{ event: string; actor: string }>`
        SELECT event, actor FROM admin_audit_log WHERE event = 'scim.role_mappings.updated' ORDER BY seq DESC LIMIT 1`
      assert.strictEqual(entries[0].actor, `user:${me.user_id}`)
    }))
})
