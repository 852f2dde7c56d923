import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  EnterpriseUrn,
  ErrorUrn,
  filter,
  GroupUrn,
  isScimError,
  ListUrn,
  oktaUser,
  patchOp,
  PatchOpUrn,
  scimClient,
  unique,
  UserUrn
} from "./ScimClient.ts"
import { adminClient, http, json, layer as testServer, serverSuite } from "./TestServer.ts"

const login = (email: string, password = "Provisioned-Passw0rd!") =>
  http("/api/auth/login", json("POST", { email, password }))

/** A User as Microsoft Entra ID's provisioning service creates it. */
const entraUser = (userName: string) => ({
  schemas: [UserUrn, EnterpriseUrn],
  externalId: crypto.randomUUID(),
  userName,
  active: true,
  emails: [{ primary: true, type: "work", value: userName }],
  meta: { resourceType: "User" },
  name: { formatted: "Test User", familyName: "User", givenName: "Test" },
  roles: [],
  [EnterpriseUrn]: { department: "Finance", employeeNumber: "4711" },
  "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User": { customAttribute: "x" }
})

layer(testServer(), serverSuite)(
  "SCIM provisioning runs, in the order the identity providers' validators use",
  (it) => {
    it.effect("Microsoft Entra ID: create, find by userName and externalId, rename, disable, group, add and remove member, delete", () =>
      Effect.gen(function*() {
        const scim = yield* scimClient({ base: "/api/v1/scim" })
        const userName = `Test_User_${crypto.randomUUID()}@contoso.com`
        const absent = yield* scim.get(`/Users${filter(`userName eq "${userName}"`)}`)
        assert.deepInclude(absent.body, { schemas: [ListUrn], totalResults: 0, Resources: [] })
        const body = entraUser(userName)
        const created = yield* scim.post("/Users", body)
        assert.strictEqual(created.status, 201)
        const id = created.body.id
        assert.strictEqual(created.body[EnterpriseUrn].department, "Finance")
        const byUserName = yield* scim.get(`/Users${filter(`userName eq "${userName.toLowerCase()}"`)}`)
        assert.deepStrictEqual(byUserName.body.Resources.map((u: { id: string }) => u.id), [id])
        const byExternalId = yield* scim.get(`/Users${filter(`externalId eq "${body.externalId}"`)}`)
        assert.deepStrictEqual(byExternalId.body.Resources.map((u: { id: string }) => u.id), [id])
        const renamed = yield* scim.patch(
          `/Users/${id}`,
          patchOp(
            { op: "Replace", path: "name.givenName", value: "Renamed" },
            { op: "Replace", path: "name.familyName", value: "Person" },
            { op: "Add", path: "emails[type eq \"work\"].value", value: userName },
            { op: "Replace", path: `${EnterpriseUrn}:manager`, value: crypto.randomUUID() }
          )
        )
        assert.strictEqual(renamed.status, 200, JSON.stringify(renamed.body))
        assert.deepInclude(renamed.body.name, { givenName: "Renamed", familyName: "Person" })
        assert.isString(renamed.body[EnterpriseUrn].manager.value)
        const disabled = yield* scim.patch(`/Users/${id}`, patchOp({ op: "Replace", path: "active", value: "False" }))
        assert.strictEqual(disabled.body.active, false)
        const groupName = `Test_Group_${unique()}`
        const group = yield* scim.post("/Groups", {
          schemas: [GroupUrn],
          externalId: crypto.randomUUID(),
          displayName: groupName,
          meta: { resourceType: "Group" }
        })
        assert.strictEqual(group.status, 201)
        const found = yield* scim.get(
          `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${groupName}"`)}`
        )
        assert.deepStrictEqual(found.body.Resources.map((g: { id: string }) => g.id), [group.body.id])
        const added = yield* scim.patch(
          `/Groups/${group.body.id}`,
          patchOp({ op: "Add", path: "members", value: [{ $ref: null, value: id }] })
        )
        assert.deepStrictEqual(added.body.members.map((m: { value: string }) => m.value), [id])
        const removed = yield* scim.patch(
          `/Groups/${group.body.id}`,
          patchOp({ op: "Remove", path: "members", value: [{ $ref: null, value: id }] })
        )
        assert.notProperty(removed.body, "members")
        assert.strictEqual((yield* scim.delete(`/Groups/${group.body.id}`)).status, 204)
        assert.strictEqual((yield* scim.delete(`/Users/${id}`)).status, 204)
        assert.isTrue(isScimError(yield* scim.get(`/Users/${id}`), 404))
      }))

    it.effect("Okta: look up, create, read, find by userName and externalId, update profile, deactivate, push a group, add and remove member, rename, delete", () =>
      Effect.gen(function*() {
        const scim = yield* scimClient()
        const userName = `runscope${unique()}test@atko.com`
        const lookup = yield* scim.get(
          `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`
        )
        assert.deepInclude(lookup.body, { totalResults: 0, startIndex: 1, itemsPerPage: 0 })
        const body = oktaUser(userName)
        const created = yield* scim.post("/Users", body)
        assert.strictEqual(created.status, 201)
        const id = created.body.id
        assert.strictEqual((yield* scim.get(`/Users/${id}`)).body.userName, userName)
        assert.strictEqual((yield* scim.get(`/Users${filter(`userName eq "${userName}"`)}`)).body.Resources[0].id, id)
        assert.strictEqual(
          (yield* scim.get(`/Users${filter(`externalId eq "${body.externalId}"`)}`)).body.Resources[0].id,
          id
        )
        const updated = yield* scim.patch(
          `/Users/${id}`,
          patchOp({ op: "replace", value: { "name.givenName": "Grace", "name.familyName": "Hopper" } })
        )
        assert.deepInclude(updated.body.name, { givenName: "Grace", familyName: "Hopper" })
        assert.strictEqual((yield* login(userName)).status, 200)
        const deactivated = yield* scim.patch(`/Users/${id}`, patchOp({ op: "replace", value: { active: false } }))
        assert.strictEqual(deactivated.body.active, false)
        assert.strictEqual((yield* login(userName)).status, 403)
        const groupName = `Okta Group ${unique()}`
        const none = yield* scim.get(
          `/Groups?filter=${
            encodeURIComponent(`displayName eq "${groupName}"`)
          }&excludedAttributes=members&startIndex=1&count=100`
        )
        assert.strictEqual(none.body.totalResults, 0)
        const group = yield* scim.post("/Groups", { schemas: [GroupUrn], displayName: groupName, members: [] })
        assert.strictEqual(group.status, 201)
        const gid = group.body.id
        const added = yield* scim.patch(
          `/Groups/${gid}`,
          patchOp({ op: "add", path: "members", value: [{ value: id, display: userName }] })
        )
        assert.deepStrictEqual(added.body.members.map((m: { value: string }) => m.value), [id])
        const removed = yield* scim.patch(
          `/Groups/${gid}`,
          patchOp({ op: "remove", path: `members[value eq "${id}"]` })
        )
        assert.notProperty(removed.body, "members")
        const renamed = yield* scim.patch(
          `/Groups/${gid}`,
          patchOp({ op: "replace", value: { id: gid, displayName: `${groupName} (renamed)` } })
        )
        assert.strictEqual(renamed.body.displayName, `${groupName} (renamed)`)
        assert.strictEqual((yield* scim.delete(`/Groups/${gid}`)).status, 204)
        assert.strictEqual((yield* scim.delete(`/Users/${id}`)).status, 204)
      }))
  }
)

layer(testServer(), serverSuite)("SCIM PATCH of users: the providers' quirks one by one", (it) => {
  const fresh = Effect.gen(function*() {
    const scim = yield* scimClient()
    const created = yield* scim.post("/Users", oktaUser(`quirk-${unique()}@example.com`, { title: "Analyst" }))
    assert.strictEqual(created.status, 201)
    return { scim, user: created.body as Record<string, any> & { id: string } }
  })

  it.effect("ops in any case: Replace, Add, Remove, REPLACE", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const result = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp(
          { op: "Replace", path: "title", value: "Lead" },
          { op: "Add", path: "nickName", value: "Ace" },
          { op: "REPLACE", path: "displayName", value: "Ace Lovelace" },
          { op: "Remove", path: "locale" }
        )
      )
      assert.strictEqual(result.status, 200)
      assert.deepInclude(result.body, { title: "Lead", nickName: "Ace", displayName: "Ace Lovelace" })
      assert.notProperty(result.body, "locale")
    }))

  it.effect("active as the strings \"False\" and \"True\", with and without path", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      assert.strictEqual(
        (yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "Replace", path: "active", value: "False" }))).body
          .active,
        false
      )
      assert.strictEqual(
        (yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "Replace", value: { active: "True" } }))).body.active,
        true
      )
      const bad = yield* scim.patch(`/Users/${user.id}`, patchOp({ op: "Replace", path: "active", value: "Perhaps" }))
      assert.isTrue(isScimError(bad, 400))
      assert.strictEqual(bad.body.scimType, "invalidValue")
    }))

  it.effect("a value of the wrong type is 400 invalidValue, as POST and PUT refuse it, and changes nothing", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const operations: ReadonlyArray<Record<string, unknown>> = [
        { op: "replace", path: "userName", value: 12 },
        { op: "replace", value: { userName: 12 } },
        { op: "replace", path: "displayName", value: ["Ada"] },
        { op: "replace", path: "title", value: 5 },
        { op: "replace", path: "name.givenName", value: 5 },
        { op: "replace", value: { "name.givenName": true } },
        { op: "replace", path: "active", value: 1 },
        { op: "replace", path: "active", value: "yes" },
        { op: "replace", path: "emails", value: "ada@example.com" },
        { op: "add", path: "emails", value: [5] },
        { op: "replace", path: "emails[type eq \"work\"].value", value: 7 },
        { op: "add", path: "phoneNumbers", value: { value: 5551234 } },
        { op: "replace", path: "name", value: "Ada" }
      ]
      for (const operation of operations) {
        const result = yield* scim.patch(`/Users/${user.id}`, patchOp(operation))
        assert.isTrue(isScimError(result, 400), `${JSON.stringify(operation)}: ${JSON.stringify(result.body)}`)
        assert.strictEqual(result.body.scimType, "invalidValue", JSON.stringify(operation))
      }
      const after = (yield* scim.get(`/Users/${user.id}`)).body
      assert.deepStrictEqual(
        { ...after, meta: undefined },
        { ...user, meta: undefined },
        "nothing changed"
      )
      // The enterprise extension keeps an HR number as text, as POST does (employeeNumber: 701984).
      const employee = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", path: `${EnterpriseUrn}:employeeNumber`, value: 4711 })
      )
      assert.strictEqual(employee.status, 200, JSON.stringify(employee.body))
      assert.strictEqual(employee.body[EnterpriseUrn].employeeNumber, "4711")
    }))

  it.effect("no path, dotted keys: only the named sub-attributes change; a complex value merges too", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const dotted = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({
          op: "replace",
          value: { "name.givenName": "X", "urn:ietf:params:scim:schemas:core:2.0:User:title": "Boss" }
        })
      )
      assert.deepStrictEqual(dotted.body.name, { formatted: "X Lovelace", givenName: "X", familyName: "Lovelace" })
      assert.strictEqual(dotted.body.title, "Boss")
      const merged = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", value: { name: { familyName: "Y" } } })
      )
      assert.deepStrictEqual(merged.body.name, { formatted: "X Y", givenName: "X", familyName: "Y" })
    }))

  it.effect("the enterprise extension: whole, by attribute path, and a manager given as its id alone (Entra)", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const whole = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "add", value: { [EnterpriseUrn]: { department: "Ops", costCenter: "42" } } })
      )
      assert.deepStrictEqual(whole.body[EnterpriseUrn], { department: "Ops", costCenter: "42" })
      assert.include(whole.body.schemas, EnterpriseUrn)
      const manager = crypto.randomUUID()
      const byPath = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp(
          { op: "Replace", path: `${EnterpriseUrn}:department`, value: "Legal" },
          { op: "Add", path: `${EnterpriseUrn}:manager`, value: manager }
        )
      )
      assert.deepStrictEqual(byPath.body[EnterpriseUrn], {
        department: "Legal",
        costCenter: "42",
        manager: { value: manager }
      })
      const asPath = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", path: EnterpriseUrn, value: { division: "North" } })
      )
      assert.strictEqual(asPath.body[EnterpriseUrn].division, "North")
      const removed = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "Remove", path: `${EnterpriseUrn}:manager`, value: [{ value: manager }] })
      )
      assert.notProperty(removed.body[EnterpriseUrn], "manager")
    }))

  it.effect("value paths: emails[type eq \"work\"].value replaced, a home email added where none was", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const newEmail = `changed-${unique()}@example.com`
      const replaced = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", path: "emails[type eq \"work\"].value", value: newEmail })
      )
      assert.strictEqual(replaced.body.emails.find((e: { type: string }) => e.type === "work").value, newEmail)
      // The primary email is the sign-in email.
      assert.strictEqual((yield* login(newEmail)).status, 200)
      const added = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "add", path: "emails[type eq \"home\"].value", value: "home@example.org" })
      )
      assert.deepStrictEqual(added.body.emails.map((e: { type: string }) => e.type).sort(), ["home", "work"])
      const removed = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "remove", path: "emails[type eq \"home\"]" })
      )
      assert.deepStrictEqual(removed.body.emails.map((e: { type: string }) => e.type), ["work"])
    }))

  it.effect("unknown attributes in a PATCH are ignored, never a 400", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const result = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp(
          {
            op: "add",
            path: "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User:customAttribute",
            value: "x"
          },
          { op: "replace", value: { madeUp: 1, title: "Kept" } }
        )
      )
      assert.strictEqual(result.status, 200)
      assert.strictEqual(result.body.title, "Kept")
      assert.notProperty(result.body, "madeUp")
    }))

  it.effect("Okta repeats the id in a value: the same id is ignored, another is 400 mutability", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const same = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", value: { id: user.id, active: false } })
      )
      assert.strictEqual(same.body.active, false)
      const other = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", value: { id: crypto.randomUUID() } })
      )
      assert.strictEqual(other.body.scimType, "mutability")
      const byPath = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "replace", path: "meta.created", value: "2000-01-01T00:00:00Z" })
      )
      assert.strictEqual(byPath.body.scimType, "mutability")
      const groups = yield* scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: "add", path: "groups", value: [{ value: crypto.randomUUID() }] })
      )
      assert.strictEqual(groups.body.scimType, "mutability")
    }))

  it.effect("malformed PatchOps: bad op, remove without path, no Operations, wrong schemas, a filter that matches nothing", () =>
    Effect.gen(function*() {
      const { scim, user } = yield* fresh
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [patchOp({ op: "jump", path: "title", value: "x" }), "invalidSyntax"],
        [patchOp({ op: "remove" }), "noTarget"],
        [{ schemas: [PatchOpUrn] }, "invalidSyntax"],
        [{ schemas: [PatchOpUrn], Operations: [] }, "invalidSyntax"],
        [{ schemas: ["urn:example:wrong"], Operations: [{ op: "add", path: "title", value: "x" }] }, "invalidSyntax"],
        [patchOp({ op: "replace", path: "emails[type ne \"work\"].value", value: "x@example.com" }), "noTarget"],
        [patchOp({ op: "add", path: "title" }), "invalidSyntax"],
        [patchOp({ op: "replace", value: "not an object" }), "invalidValue"]
      ]
      for (const [body, scimType] of cases) {
        const result = yield* scim.patch(`/Users/${user.id}`, body)
        assert.isTrue(
          isScimError(result, 400),
          `${JSON.stringify(body)}: ${result.status} ${JSON.stringify(result.body)}`
        )
        assert.strictEqual(result.body.scimType, scimType, JSON.stringify(body))
      }
      assert.strictEqual((yield* scim.get(`/Users/${user.id}`)).body.title, "Analyst")
    }))
})

layer(testServer(), serverSuite)("SCIM discovery and errors at the edge", (it) => {
  it.effect("/ServiceProviderConfig, /Schemas and /ResourceTypes (RFC 7644 §4)", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      const config = yield* scim.get("/ServiceProviderConfig")
      assert.match(config.headers.get("content-type") ?? "", /^application\/scim\+json/)
      assert.deepInclude(config.body, {
        patch: { supported: true },
        bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
        filter: { supported: true, maxResults: 1000 },
        changePassword: { supported: true },
        sort: { supported: true },
        etag: { supported: true }
      })
      assert.strictEqual(config.body.authenticationSchemes[0].type, "oauthbearertoken")
      const schemas = yield* scim.get("/Schemas")
      assert.deepInclude(schemas.body, { totalResults: 3, itemsPerPage: 3, startIndex: 1 })
      assert.sameMembers(schemas.body.Resources.map((s: { id: string }) => s.id), [UserUrn, EnterpriseUrn, GroupUrn])
      const user = yield* scim.get(`/Schemas/${UserUrn}`)
      const userName = user.body.attributes.find((a: { name: string }) => a.name === "userName")
      assert.deepInclude(userName, {
        type: "string",
        required: true,
        caseExact: false,
        uniqueness: "server",
        mutability: "readWrite"
      })
      const password = user.body.attributes.find((a: { name: string }) => a.name === "password")
      assert.deepInclude(password, { mutability: "writeOnly", returned: "never" })
      assert.isTrue(isScimError(yield* scim.get("/Schemas/urn:example:nothing"), 404))
      const types = yield* scim.get("/ResourceTypes")
      assert.sameMembers(types.body.Resources.map((t: { id: string }) => t.id), ["User", "Group"])
      const userType = yield* scim.get("/ResourceTypes/User")
      assert.deepInclude(userType.body, { endpoint: "/Users", schema: UserUrn })
      assert.deepStrictEqual(userType.body.schemaExtensions, [{ schema: EnterpriseUrn, required: false }])
      assert.isTrue(isScimError(yield* scim.get("/ResourceTypes/Device"), 404))
      assert.isTrue(isScimError(yield* http("/v1/scim/ServiceProviderConfig"), 401))
    }))

  it.effect("malformed JSON 400 invalidSyntax, unknown routes 404, wrong methods 405 with Allow, 413 and 415, at both bases", () =>
    Effect.gen(function*() {
      for (const base of ["/v1/scim", "/api/v1/scim"]) {
        const scim = yield* scimClient({ base })
        const malformed = yield* scim.post("/Users", "{\"userName\": ")
        assert.isTrue(isScimError(malformed, 400), base)
        assert.strictEqual(malformed.body.scimType, "invalidSyntax")
        const notAnObject = yield* scim.post("/Users", "[1, 2]")
        assert.isTrue(isScimError(notAnObject, 400))
        const unknown = yield* scim.get("/Devices")
        assert.isTrue(isScimError(unknown, 404))
        assert.match(unknown.body.detail, /No route for GET \/v1\/scim\/Devices/)
        const unknownAnonymous = yield* http(`${base}/Nothing/here`)
        assert.isTrue(isScimError(unknownAnonymous, 404))
        const wrongMethod = yield* scim.delete("/Users")
        assert.isTrue(isScimError(wrongMethod, 405))
        assert.strictEqual(wrongMethod.headers.get("allow"), "GET, POST")
        const wrongOnItem = yield* scim.post(`/Users/${crypto.randomUUID()}`, {})
        assert.isTrue(isScimError(wrongOnItem, 405))
        assert.strictEqual(wrongOnItem.headers.get("allow"), "GET, PUT, PATCH, DELETE")
        const badlyEncoded = yield* scim.get("/Users/%ED%A0%80")
        assert.isTrue(isScimError(badlyEncoded, 400))
        assert.match(badlyEncoded.body.detail, /malformed percent-encoding/)
        const tooLarge = yield* scim.post("/Users", { userName: "big@example.com", title: "x".repeat(2 * 1024 * 1024) })
        assert.isTrue(isScimError(tooLarge, 413))
        const wrongType = yield* scim.post("/Users", "userName=x", {
          "content-type": "application/x-www-form-urlencoded"
        })
        assert.isTrue(isScimError(wrongType, 415))
        assert.match(wrongType.body.detail, /application\/json .*application\/scim\+json/)
        const plainJson = yield* scim.post("/Users", oktaUser(`json-${unique()}@example.com`), {
          "content-type": "application/json"
        })
        assert.strictEqual(plainJson.status, 201)
        assert.match(plainJson.headers.get("content-type") ?? "", /^application\/scim\+json/)
        assert.deepStrictEqual(malformed.body.schemas, [ErrorUrn])
      }
    }))

  it.effect("every SCIM error matches the schema /openapi.json publishes for it, _tag included: decoding failures, malformed JSON, 413, 415", () =>
    Effect.gen(function*() {
      const document = (yield* http("/openapi.json")).body
      const resolve = (schema: any): any =>
        schema?.$ref === undefined
          ? schema
          : document.components.schemas[String(schema.$ref).slice("#/components/schemas/".length)]
      /** The schemas an operation publishes for a status in application/scim+json. */
      const published = (path: string, method: string, status: number): Array<any> => {
        const response = resolve(document.paths[path][method].responses[String(status)])
        const content = response?.content?.["application/scim+json"]
        assert.isDefined(content, `${method} ${path} ${status} in application/scim+json`)
        const schema = resolve(content.schema)
        return (schema.anyOf ?? schema.oneOf ?? [schema]).map(resolve)
      }
      const matches = (body: Record<string, unknown>, schema: any) =>
        (schema.required as Array<string>).every((key) => key in body) &&
        Object.keys(body).every((key) => key in schema.properties) &&
        (schema.properties._tag.enum ?? [schema.properties._tag.const]).includes(body._tag)
      const scim = yield* scimClient()
      const user = (yield* scim.post("/Users", oktaUser(`tag-${unique()}@example.com`))).body
      const group = (yield* scim.post("/Groups", { schemas: [GroupUrn], displayName: `Tag ${unique()}` })).body
      const cases: ReadonlyArray<readonly [string, string, string, unknown, Record<string, string>?]> = [
        ["/v1/scim/Users/{id}", "patch", `/Users/${user.id}`, { schemas: [PatchOpUrn], Operations: "x" }],
        ["/v1/scim/Users", "post", "/Users", { schemas: [UserUrn], userName: 42 }],
        ["/v1/scim/Users", "post", "/Users", "{\"userName\": "],
        ["/v1/scim/Groups", "post", "/Groups", { schemas: [GroupUrn], displayName: 5 }],
        ["/v1/scim/Users/{id}", "put", `/Users/${user.id}`, { schemas: [UserUrn], userName: 5 }],
        ["/v1/scim/Groups/{id}", "put", `/Groups/${group.id}`, { schemas: [GroupUrn], displayName: 5 }],
        ["/v1/scim/Users/.search", "post", "/Users/.search", { count: "x" }],
        ["/v1/scim/Users", "get", "/Users?count=1&count=2", undefined],
        ["/v1/scim/Users", "post", "/Users", "userName=x", { "content-type": "application/x-www-form-urlencoded" }],
        ["/v1/scim/Groups/{id}", "patch", `/Groups/${group.id}`, "x".repeat(2 * 1024 * 1024)]
      ]
      for (const [path, method, url, body, headers] of cases) {
        const result = method === "get"
          ? yield* scim.get(url)
          : yield* (method === "post" ? scim.post : method === "put" ? scim.put : scim.patch)(url, body, headers)
        const label = `${method} ${url}: ${result.status} ${JSON.stringify(result.body)}`
        assert.isTrue(isScimError(result, result.status) && result.status >= 400, label)
        assert.isString(result.body._tag, label)
        assert.isTrue(published(path, method, result.status).some((schema) => matches(result.body, schema)), label)
      }
      // A rate limit and an edge 4xx carry no scimType: RFC 7644 defines them for 400 (and 409's uniqueness) only.
      const rateLimited = published("/v1/scim/Users", "get", 429)
      assert.isTrue(rateLimited.every((schema) => !("scimType" in schema.properties)))
    }))

  it.effect("/openapi.json documents every SCIM operation with open request bodies and no 501", () =>
    Effect.gen(function*() {
      const { body } = yield* http("/openapi.json")
      const scimPaths = Object.entries(body.paths as Record<string, Record<string, any>>).filter(([path]) =>
        path.startsWith("/v1/scim/") || path === "/api/admin/scim/role-mappings"
      )
      assert.isAtLeast(scimPaths.length, 8)
      for (const [path, operations] of scimPaths) {
        for (const [method, operation] of Object.entries(operations)) {
          assert.isString(operation.summary, `${method} ${path}`)
          assert.isString(operation.description, `${method} ${path}`)
          assert.notProperty(operation.responses, "501", `${method} ${path}`)
        }
      }
      for (const name of ["ScimUserInput", "ScimGroupInput", "ScimPatchOp"]) {
        assert.notStrictEqual(body.components.schemas[name].additionalProperties, false, name)
      }
      const admin = yield* adminClient
      assert.deepStrictEqual(yield* admin.api.scimRoleMappings.get(), { mappings: [] })
    }))
})
