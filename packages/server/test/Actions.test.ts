/**
 * The action catalog and direct execution over HTTP (spec: `GET /v1/actions`,
 * `POST /v1/actions/{id}/execute` rules 2–6 and limits; issue #4: the
 * `/api/admin/actions` and `/api/admin/secrets` administration), through the
 * SDK against the test server and real local HTTP targets.
 */
import type { ActionAdmin } from "@agent-platform/domain"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { newAction, param, spaceWith } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import {
  adminClient,
  bearer,
  createKey,
  http,
  json,
  keyClient,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  sessionCookie,
  signIn
} from "./TestServer.ts"

layer(testServer({ ACTIONS_TIMEOUT_MS: "2000" }), serverSuite)("actions", (it) => {
  describe("GET /v1/actions", () => {
    it.effect("lists the tenant's active actions, not filtered by the key's space", () =>
      Effect.gen(function*() {
        const active = yield* newAction({ url: "https://example.com/a", parameters: [param("q", "string", true)] })
        const inactive = yield* newAction({ url: "https://example.com/b", is_active: false })
        const unassigned = yield* newAction({ url: "https://example.com/c", http_method: "POST" })
        const space = yield* spaceWith([active.id])
        const { key } = yield* createKey(["actions:read"], { space_id: space.id })
        const client = yield* keyClient(key)
        const { actions } = yield* client.api.actions.list()
        const ids = actions.map((a) => a.id)
        assert.include(ids, unassigned.id)
        assert.notInclude(ids, inactive.id)
        assert.deepStrictEqual(actions.find((a) => a.id === active.id), {
          id: active.id,
          name: active.name,
          description: "Does a thing",
          http_method: "GET",
          is_active: true,
          parameters: [{ name: "q", type: "string", description: "the q", required: true }]
        })
        assert.isTrue(actions.every((a) => a.is_active))
      }))

    it.effect("401 without a key; 403 for a key with neither actions nor actions:read", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* http("/v1/actions")).status, 401)
        const { key } = yield* createKey(["actions:execute"])
        const error = yield* Effect.flatMap(keyClient(key), (c) => c.api.actions.list()).pipe(Effect.flip)
        assert.strictEqual(error._tag, "ScopeMissing")
        assert.match(messageOf(error), /`actions` or `actions:read`/)
      }))

    it.effect("another tenant's actions are not listed", () =>
      Effect.gen(function*() {
        const other = yield* secondTenant()
        const theirs = yield* newAction({ url: "https://example.com/theirs" }, other.client)
        const { key } = yield* createKey(["actions"])
        const { actions } = yield* Effect.flatMap(keyClient(key), (c) => c.api.actions.list())
        assert.isFalse(actions.some((a) => a.id === theirs.id))
      }))
  })

  describe("POST /v1/actions/{id}/execute", () => {
    it.effect("200: GET sends the params as query string, fills URL placeholders and secret headers, and returns the parsed JSON", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, { ticket: 42 }))
        const as = yield* adminClient
        yield* as.api.actionsAdmin.putSecret({ params: { name: "TICKETS_TOKEN" }, payload: { value: "s3cret-value" } })
        const action = yield* newAction({
          url: `${target.url}/orgs/{org}/tickets`,
          headers: { authorization: "Bearer {{secret:TICKETS_TOKEN}}" },
          parameters: [param("org", "string", true), param("status", "string", false), param("limit", "integer", false)]
        })
        const { id: keyId, key } = yield* createKey(["actions"])
        const client = yield* keyClient(key)
        const response = yield* client.api.actions.execute({
          params: { id: action.id },
          payload: { params: { org: "acme corp", status: "open", limit: 5, undeclared: "dropped" } }
        })
        assert.deepStrictEqual(response, {
          success: true,
          status_code: 200,
          action_id: action.id,
          action_name: action.name,
          response: { ticket: 42 },
          error: null
        })
        assert.strictEqual(target.received[0].method, "GET")
        assert.strictEqual(target.received[0].url, "/orgs/acme%20corp/tickets?status=open&limit=5")
        assert.strictEqual(target.received[0].headers.authorization, "Bearer s3cret-value")
        const sql = yield* SqlClient.SqlClient
        const [execution] = yield* sql<
          { caller_kind: string; caller_id: string; supervision: string; success: boolean }
        >`
          SELECT caller_kind, caller_id, supervision, success FROM action_executions WHERE action_id = ${action.id}`
        assert.deepStrictEqual({ ...execution }, {
          caller_kind: "key",
          caller_id: keyId,
          supervision: "autonomous",
          success: true
        })
      }))

    it.effect("200: POST sends the other params as a JSON body; a text answer is returned as text", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => ({
          status: 201,
          body: "created",
          headers: { "content-type": "text/plain" }
        }))
        const action = yield* newAction({
          url: `${target.url}/items/{id}`,
          http_method: "POST",
          parameters: [param("id", "integer", true), param("tags", "array", false), param("meta", "object", false)]
        })
        const { key } = yield* createKey(["actions:execute"])
        const response = yield* Effect.flatMap(
          keyClient(key),
          (c) =>
            c.api.actions.execute({
              params: { id: action.id },
              payload: { params: { id: 7, tags: ["a"], meta: { x: true } } }
            })
        )
        assert.strictEqual(response.status_code, 201)
        assert.strictEqual(response.response, "created")
        assert.strictEqual(target.received[0].url, "/items/7")
        assert.deepStrictEqual(JSON.parse(target.received[0].body), { tags: ["a"], meta: { x: true } })
      }))

    it.effect("400 names every missing or mistyped parameter, and nothing is called", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* newAction({
          url: target.url,
          parameters: [param("email", "string", true), param("count", "integer", true), param("flag", "boolean", false)]
        })
        const { key } = yield* createKey(["actions"])
        const error = yield* Effect.flatMap(keyClient(key), (c) =>
          c.api.actions.execute({ params: { id: action.id }, payload: { params: { count: 1.5, flag: "yes" } } })).pipe(
            Effect.flip
          )
        assert.strictEqual(error._tag, "InvalidRequest")
        const message = messageOf(error)
        assert.include(message, "missing required parameter `email` (string)")
        assert.include(message, "parameter `count` must be an integer")
        assert.include(message, "parameter `flag` must be a boolean")
        assert.strictEqual(target.received.length, 0)
      }))

    it.effect("bad input never 500s: params that are not an object, malformed JSON, a malformed id", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* newAction({ url: target.url })
        const { key } = yield* createKey(["actions"])
        const notObject = yield* http(`/v1/actions/${action.id}/execute`, json("POST", { params: [1, 2] }, bearer(key)))
        assert.strictEqual(notObject.status, 400)
        assert.match(notObject.body.error, /params/)
        const malformed = yield* http(`/v1/actions/${action.id}/execute`, json("POST", "{not json", bearer(key)))
        assert.strictEqual(malformed.status, 400)
        const badId = yield* http(
          `/v1/actions/${encodeURIComponent("'; DROP TABLE actions;--")}/execute`,
          json("POST", {}, bearer(key))
        )
        assert.strictEqual(badId.status, 502)
        assert.strictEqual(badId.body.success, false)
        const nulParam = yield* http(
          `/v1/actions/${action.id}/execute`,
          json("POST", { params: { q: "a\u0000b" } }, bearer(key))
        )
        assert.strictEqual(nulParam.status, 200)
        const cookie = yield* Effect.flatMap(adminClient, sessionCookie)
        const nulName = yield* http(
          "/api/admin/actions",
          json("POST", {
            name: "a\u0000b",
            description: "",
            http_method: "GET",
            url: "https://e.com",
            parameters: [],
            is_active: true
          }, { cookie })
        )
        assert.strictEqual(nulName.status, 400)
        assert.match(nulName.body.error, /name: must not contain NUL/)
      }))

    it.effect("404 for a space-bound key: an action outside its space and a nonexistent one get the same body", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, { ok: true }))
        const inside = yield* newAction({ url: `${target.url}/inside` })
        const outside = yield* newAction({ url: `${target.url}/outside` })
        const space = yield* spaceWith([inside.id])
        yield* spaceWith([outside.id])
        const { key } = yield* createKey(["actions"], { space_id: space.id })
        const client = yield* keyClient(key)
        assert.isTrue((yield* client.api.actions.execute({ params: { id: inside.id }, payload: {} })).success)
        const outsideResponse = yield* http(`/v1/actions/${outside.id}/execute`, json("POST", {}, bearer(key)))
        const missingResponse = yield* http(`/v1/actions/${crypto.randomUUID()}/execute`, json("POST", {}, bearer(key)))
        assert.strictEqual(outsideResponse.status, 404)
        assert.strictEqual(missingResponse.status, 404)
        assert.deepStrictEqual(outsideResponse.body, missingResponse.body)
        assert.deepStrictEqual(outsideResponse.body, { error: "action not found", _tag: "NotFound" })
        const typed = yield* client.api.actions.execute({ params: { id: outside.id }, payload: {} }).pipe(Effect.flip)
        assert.strictEqual(typed._tag, "NotFound")
        assert.deepStrictEqual(target.received.map((r) => r.url), ["/inside"])
      }))

    it.effect("502 for an unbound key and a nonexistent action: an ActionResponse with success false", () =>
      Effect.gen(function*() {
        const { key } = yield* createKey(["actions"])
        const id = crypto.randomUUID()
        const error = yield* Effect.flatMap(
          keyClient(key),
          (c) => c.api.actions.execute({ params: { id }, payload: {} })
        ).pipe(Effect.flip)
        assert.strictEqual(error._tag, "ActionFailed")
        if (error._tag !== "ActionFailed") return
        assert.strictEqual(error.success, false)
        assert.strictEqual(error.status_code, 502)
        assert.strictEqual(error.action_id, id)
        assert.isString(error.response)
        const raw = yield* http(`/v1/actions/${id}/execute`, json("POST", {}, bearer(key)))
        assert.strictEqual(raw.status, 502)
        assert.deepInclude(raw.body, { success: false, status_code: 502, action_id: id })
      }))

    it.effect("502 for a remote failure: success false, the remote's status_code and a string response with the failure", () =>
      Effect.gen(function*() {
        const failing = yield* localServer(() => ({ status: 503, body: "maintenance" }))
        const action = yield* newAction({ url: failing.url })
        const { key } = yield* createKey(["actions"])
        const raw = yield* http(`/v1/actions/${action.id}/execute`, json("POST", {}, bearer(key)))
        assert.strictEqual(raw.status, 502)
        assert.deepStrictEqual(raw.body, {
          success: false,
          status_code: 503,
          action_id: action.id,
          action_name: action.name,
          response: "the remote system answered HTTP 503: maintenance",
          error: "the remote system answered HTTP 503",
          _tag: "ActionFailed"
        })
      }))

    it.effect("502 when the remote hangs past the timeout, with the failure message", () =>
      Effect.gen(function*() {
        const hanging = yield* localServer(() => "hang")
        const action = yield* newAction({ url: hanging.url })
        const { key } = yield* createKey(["actions"])
        const error = yield* Effect.flatMap(keyClient(key), (c) =>
          c.api.actions.execute({ params: { id: action.id }, payload: {} })).pipe(
            Effect.flip
          )
        assert.strictEqual(error._tag, "ActionFailed")
        if (error._tag !== "ActionFailed") {
          return
        }
        assert.strictEqual(error.status_code, 504)
        assert.match(String(error.response), /did not answer within/)
      }))

    it.effect("403 for a key with only actions:read", () =>
      Effect.gen(function*() {
        const { key } = yield* createKey(["actions:read"])
        const error = yield* Effect.flatMap(keyClient(key), (c) =>
          c.api.actions.execute({ params: { id: crypto.randomUUID() }, payload: {} })).pipe(
            Effect.flip
          )
        assert.strictEqual(error._tag, "ScopeMissing")
        assert.match(messageOf(error), /`actions` or `actions:execute`/)
      }))

    it.effect("429 after 60 executions in a minute, whatever the key's own rate_limit_rpm", () =>
      Effect.gen(function*() {
        const { key } = yield* createKey(["actions"], { rate_limit_rpm: 1000 })
        const missing = crypto.randomUUID()
        for (let i = 0; i < 60; i++) {
          const response = yield* http(`/v1/actions/${missing}/execute`, json("POST", {}, bearer(key)))
          assert.strictEqual(response.status, 502, `call ${i + 1}`)
        }
        const limited = yield* http(`/v1/actions/${missing}/execute`, json("POST", {}, bearer(key)))
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.body._tag, "RateLimited")
        assert.strictEqual(limited.headers.get("x-ratelimit-limit"), "60")
        assert.isNotNull(limited.headers.get("retry-after"))
        // Listing is another class: still allowed.
        assert.strictEqual((yield* http("/v1/actions", { headers: bearer(key) })).status, 200)
      }))

    it.effect("another tenant's action cannot be run: 502 for an unbound key, and its system is never called", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        const other = yield* secondTenant()
        const theirs = yield* newAction({ url: target.url }, other.client)
        const { key } = yield* createKey(["actions"])
        const response = yield* http(`/v1/actions/${theirs.id}/execute`, json("POST", {}, bearer(key)))
        assert.strictEqual(response.status, 502)
        assert.strictEqual(target.received.length, 0)
      }))
  })

  describe("/api/admin/actions", () => {
    it.effect("creates (201), lists active and inactive, updates, and soft-deletes an action, all audited", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const created = yield* as.api.actionsAdmin.create({
          payload: {
            name: "Create ticket",
            description: "Opens a ticket",
            http_method: "POST",
            url: "https://tickets.example.com/orgs/{org}/tickets",
            headers: { "x-api-key": "{{secret:TICKETS_KEY}}" },
            parameters: [param("org", "string", true), param("title", "string", true)],
            is_active: true,
            requires_confirmation: true
          }
        })
        assert.deepInclude(created, {
          name: "Create ticket",
          http_method: "POST",
          url: "https://tickets.example.com/orgs/{org}/tickets",
          headers: { "x-api-key": "{{secret:TICKETS_KEY}}" },
          is_active: true,
          requires_confirmation: true
        })
        const updated = yield* as.api.actionsAdmin.update({
          params: { id: created.id },
          payload: { description: "Opens a support ticket" }
        })
        assert.deepStrictEqual({ ...updated }, { ...created, description: "Opens a support ticket" })
        const deleted = yield* as.api.actionsAdmin.delete({ params: { id: created.id } })
        assert.isFalse(deleted.is_active)
        const { actions } = yield* as.api.actionsAdmin.list()
        assert.isFalse(actions.find((a) => a.id === created.id)!.is_active)
        const { key } = yield* createKey(["actions"])
        const client = yield* keyClient(key)
        assert.isFalse((yield* client.api.actions.list()).actions.some((a) => a.id === created.id))
        const run = yield* client.api.actions.execute({ params: { id: created.id }, payload: {} }).pipe(Effect.flip)
        assert.strictEqual(run._tag, "ActionFailed")
        const sql = yield* SqlClient.SqlClient
        const events = yield* sql<{ event: string; data: { header_names?: ReadonlyArray<string> } }>`
          SELECT event, data FROM admin_audit_log WHERE target = ${`action:${created.id}`} ORDER BY seq`
        assert.deepStrictEqual(events.map((e) => e.event), ["action.created", "action.updated", "action.deactivated"])
        assert.deepStrictEqual(events[0].data.header_names, ["x-api-key"])
      }))

    it.effect("400 names what is wrong: undeclared URL placeholders, duplicate parameters, bad URLs and headers, bad schema", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const attempt = (payload: Partial<typeof ActionAdmin.CreateAction.Type>) =>
          as.api.actionsAdmin.create({
            payload: {
              name: "x",
              description: "",
              http_method: "GET",
              url: "https://example.com",
              parameters: [],
              is_active: true,
              ...payload
            }
          }).pipe(Effect.flip, Effect.map(messageOf))
        assert.include(
          yield* attempt({ url: "https://example.com/{missing}" }),
          "url: the placeholder `{missing}` names no declared parameter"
        )
        assert.include(
          yield* attempt({ parameters: [param("a", "string", true), param("a", "number", false)] }),
          "parameters: `a` is declared twice"
        )
        assert.include(yield* attempt({ url: "ftp://example.com/file" }), "url: must be an absolute http or https URL")
        assert.include(yield* attempt({ url: "/relative" }), "url: must be an absolute http or https URL")
        assert.include(yield* attempt({ url: "https:///tickets" }), "url: must be an absolute http or https URL")
        assert.include(
          yield* attempt({ headers: { "bad header": "x" } }),
          "headers: `bad header` is not a valid HTTP header name"
        )
        assert.include(yield* attempt({ headers: { "x-token": "{{secret:lower_case}}" } }), "is not a secret name")
        const cookie = yield* sessionCookie(as)
        const schema = yield* http(
          "/api/admin/actions",
          json("POST", {
            name: "x",
            description: "",
            http_method: "TRACE",
            url: "https://e.com",
            parameters: [],
            is_active: true
          }, { cookie })
        )
        assert.strictEqual(schema.status, 400)
        assert.match(schema.body.error, /http_method/)
        const paramType = yield* http(
          "/api/admin/actions",
          json("POST", {
            name: "x",
            description: "",
            http_method: "GET",
            url: "https://e.com",
            parameters: [{ name: "p", type: "date", description: "", required: true }],
            is_active: true
          }, { cookie })
        )
        assert.strictEqual(paramType.status, 400)
        assert.match(paramType.body.error, /parameters/)
        // An update is checked against the merged action.
        const action = yield* newAction({ url: "https://example.com/{id}", parameters: [param("id", "string", true)] })
        const error = yield* as.api.actionsAdmin.update({ params: { id: action.id }, payload: { parameters: [] } })
          .pipe(Effect.flip)
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.include(messageOf(error), "`{id}`")
      }))

    it.effect("404 for an unknown, malformed or foreign action; a tenant_id in the body has no effect", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const other = yield* secondTenant()
        const theirs = yield* newAction({ url: "https://example.com" }, other.client)
        for (const id of [crypto.randomUUID(), "nope", theirs.id]) {
          const update = yield* as.api.actionsAdmin.update({ params: { id }, payload: { name: "mine" } }).pipe(
            Effect.flip
          )
          const remove = yield* as.api.actionsAdmin.delete({ params: { id } }).pipe(Effect.flip)
          assert.deepStrictEqual([update._tag, remove._tag], ["NotFound", "NotFound"], id)
        }
        const created = yield* http(
          "/api/admin/actions",
          json("POST", {
            name: "sneaky",
            description: "",
            http_method: "GET",
            url: "https://example.com",
            parameters: [],
            is_active: true,
            tenant_id: other.tenant.id
          }, { cookie: yield* sessionCookie(as) })
        )
        assert.strictEqual(created.status, 201)
        const { actions } = yield* other.client.api.actionsAdmin.list()
        assert.isFalse(actions.some((a) => a.id === created.body.id))
      }))

    it.effect("administrators only: 401 without a session, 403 for a user, 403 for an API key", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* http("/api/admin/actions")).status, 401)
        const as = yield* adminClient
        yield* as.api.admin.createUser({
          payload: { email: "actions-user@example.com", nombre: "U", password: "Correct-Horse-9", role_id: "r_user" }
        })
        const user = yield* signIn("actions-user@example.com", "Correct-Horse-9")
        const error = yield* user.api.actionsAdmin.list().pipe(Effect.flip)
        assert.strictEqual(error._tag, "RoleMissing")
        const { key } = yield* createKey(["actions"])
        const withKey = yield* http("/api/admin/actions", { headers: bearer(key) })
        assert.strictEqual(withKey.status, 403)
        assert.strictEqual(withKey.body._tag, "SessionRequired")
      }))
  })

  describe("/api/admin/secrets", () => {
    it.effect("stores a secret encrypted, lists names only, never returns the value, deletes it (then 404)", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const value = `value-${crypto.randomUUID()}`
        const put = yield* as.api.actionsAdmin.putSecret({ params: { name: "CRM_TOKEN" }, payload: { value } })
        assert.strictEqual(put.name, "CRM_TOKEN")
        const replaced = yield* as.api.actionsAdmin.putSecret({
          params: { name: "CRM_TOKEN" },
          payload: { value: `${value}-2` }
        })
        assert.strictEqual(replaced.name, "CRM_TOKEN")
        const listed = yield* as.api.actionsAdmin.listSecrets()
        assert.deepStrictEqual(listed.secrets.filter((s) => s.name === "CRM_TOKEN").map((s) => s.name), ["CRM_TOKEN"])
        assert.notInclude(JSON.stringify(listed), value)
        const sql = yield* SqlClient.SqlClient
        const dump = JSON.stringify(yield* sql`SELECT * FROM tenant_secrets`) +
          JSON.stringify(yield* sql`SELECT event, target, data::text FROM admin_audit_log`)
        assert.notInclude(dump, value)
        const removed = yield* as.api.actionsAdmin.deleteSecret({ params: { name: "CRM_TOKEN" } })
        assert.isTrue(removed.success)
        const again = yield* as.api.actionsAdmin.deleteSecret({ params: { name: "CRM_TOKEN" } }).pipe(Effect.flip)
        assert.strictEqual(again._tag, "NotFound")
        const events = yield* sql<
          { event: string }
        >`SELECT event FROM admin_audit_log WHERE target = 'tenant_secret:CRM_TOKEN' ORDER BY seq`
        assert.deepStrictEqual(events.map((e) => e.event), [
          "tenant_secret.set",
          "tenant_secret.set",
          "tenant_secret.deleted"
        ])
      }))

    it.effect("400 for a name that is not UPPER_SNAKE_CASE or an empty value; secrets are per tenant", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const cookie = yield* sessionCookie(as)
        const badName = yield* http("/api/admin/secrets/lower-case", json("PUT", { value: "x" }, { cookie }))
        assert.strictEqual(badName.status, 400)
        assert.match(badName.body.error, /UPPER_SNAKE_CASE/)
        const empty = yield* http("/api/admin/secrets/EMPTY", json("PUT", { value: "" }, { cookie }))
        assert.strictEqual(empty.status, 400)
        assert.match(empty.body.error, /value/)
        yield* as.api.actionsAdmin.putSecret({ params: { name: "SHARED_NAME" }, payload: { value: "ours" } })
        const other = yield* secondTenant()
        assert.isFalse(
          (yield* other.client.api.actionsAdmin.listSecrets()).secrets.some((s) => s.name === "SHARED_NAME")
        )
        const foreign = yield* other.client.api.actionsAdmin.deleteSecret({ params: { name: "SHARED_NAME" } }).pipe(
          Effect.flip
        )
        assert.strictEqual(foreign._tag, "NotFound")
      }))
  })
})
