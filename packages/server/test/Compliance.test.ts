/**
 * The compliance pack over HTTP (spec: /api/compliance/*, the provenance
 * paragraph, "Supervision classification"): human-in-the-loop modes and their
 * versions, every supervision class produced through its real path (a key's
 * direct call, a chat confirmation, a signed-in user's chat, shadow mode),
 * provenance pages, the hash chains' integrity under tampering, the HITL map,
 * the streamed export read back with csv-parse, flags and roles.
 */
import type { Compliance, UserPrincipal } from "@agent-platform/domain"
import type * as Sdk from "@agent-platform/sdk"
import { assert, layer } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { ChatEngine } from "../src/Chat/ChatEngine.ts"
import { spaceWithAgent } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import {
  http,
  json,
  layer as testServer,
  messageOf,
  serverSuite,
  sessionCookie,
  signIn,
  TestServer
} from "./TestServer.ts"

const password = "Correct-Horse-9"

/** The bootstrap admin with the compliance pack on, a Security Officer, a space whose agent has `refund_order`, and a chat key. */
const world = Effect.gen(function*() {
  const server = yield* TestServer
  const admin = yield* server.admin
  yield* admin.api.admin.updateFlags({ payload: { feature_compliance_pack: true } })
  const officerEmail = `officer-${crypto.randomUUID().slice(0, 8)}@example.com`
  yield* admin.api.admin.createUser({
    payload: { email: officerEmail, nombre: "Olga Officer", password, role_id: "r_security_officer" }
  })
  const officer = yield* signIn(officerEmail, password)
  const target = yield* localServer(() => jsonAnswer(200, { refunded: true }))
  const { agent, space } = yield* spaceWithAgent({ name: "Helper", summary: "Orders and refunds" }, admin)
  const refund = yield* admin.api.actionsAdmin.create({
    payload: {
      name: "refund_order",
      description: "Refund a customer's order",
      http_method: "POST",
      url: `${target.url}/refunds`,
      parameters: [{ name: "order_id", type: "integer", description: "The order number", required: true }],
      is_active: true
    }
  })
  yield* admin.api.agentsAdmin.assignActions({ params: { id: agent.id }, payload: { action_ids: [refund.id] } })
  const keyName = `widget-${crypto.randomUUID().slice(0, 8)}`
  const created = yield* admin.api.keys.create({
    payload: { name: keyName, scopes: ["chat", "actions"], space_id: space.id, rate_limit_rpm: 10_000 }
  })
  const me = yield* admin.api.auth.me()
  return { server, admin, officer, target, space, agent, refund, key: created, keyName, me }
}).pipe(Effect.orDie)

type World = Effect.Success<typeof world>

const setMode = (w: World, actionId: string, mode: "auto" | "confirm" | "shadow") =>
  w.admin.api.actionsAdmin.update({ params: { id: actionId }, payload: { hitl_mode: mode } }).pipe(Effect.orDie)

/** A chat turn over the key, its text. */
const keyChat = (w: World, message: string, chatId?: string) =>
  Effect.gen(function*() {
    const response = yield* http(
      "/v1/chat/completions",
      json("POST", { message, ...(chatId === undefined ? {} : { chat_id: chatId }) }, {
        authorization: `Bearer ${w.key.key}`
      })
    )
    assert.strictEqual(response.status, 200)
    const events = String(response.body).split("\n\n").filter((f) => f.startsWith("data: {")).map((f) =>
      JSON.parse(f.slice(6))
    )
    return { chatId: response.headers.get("x-chat-id")!, text: events.map((e) => e.text ?? "").join(""), events }
  })

/** The officer's provenance rows of one action (all pages). */
const provenanceOf = (officer: Sdk.Connected, actionId: string) =>
  Effect.gen(function*() {
    const rows: Array<Compliance.ProvenanceRow> = []
    let cursor: string | undefined
    do {
      const page = yield* officer.api.compliance.provenance({
        query: { action_id: actionId, limit: 2, ...(cursor === undefined ? {} : { cursor }) }
      })
      rows.push(...page.rows)
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    return rows
  }).pipe(Effect.orDie)

layer(testServer(), serverSuite)("compliance", (it) => {
  it.effect("hitl_mode: each change takes the next version, stores a snapshot and an admin_audit_log entry; 400 for contradictions", () =>
    Effect.gen(function*() {
      const w = yield* world
      assert.deepInclude(w.refund, { hitl_mode: "auto", hitl_version: 1, requires_confirmation: false })
      const confirm = yield* w.admin.api.actionsAdmin.update({
        params: { id: w.refund.id },
        payload: { requires_confirmation: true }
      })
      assert.deepInclude(confirm, { hitl_mode: "confirm", hitl_version: 2, requires_confirmation: true })
      const renamed = yield* w.admin.api.actionsAdmin.update({
        params: { id: w.refund.id },
        payload: { description: "Refunds" }
      })
      assert.strictEqual(renamed.hitl_version, 2)
      const shadow = yield* setMode(w, w.refund.id, "shadow")
      assert.deepInclude(shadow, { hitl_mode: "shadow", hitl_version: 3, requires_confirmation: false })

      const sql = yield* SqlClient.SqlClient
      const versions = yield* sql<{ version: number; mode: string }>`
        SELECT version, mode FROM action_hitl_versions WHERE action_id = ${w.refund.id} ORDER BY version`
      assert.deepStrictEqual(versions.map((v) => [v.version, v.mode]), [[1, "auto"], [2, "confirm"], [3, "shadow"]])
      const audited = yield* sql<{ data: { version: number; mode: string; previous_mode: string } }>`
        SELECT data FROM admin_audit_log WHERE event = 'action.hitl_changed' AND target = ${`action:${w.refund.id}`} ORDER BY seq`
      assert.deepStrictEqual(audited.map((a) => [a.data.version, a.data.mode, a.data.previous_mode]), [[
        2,
        "confirm",
        "auto"
      ], [3, "shadow", "confirm"]])

      const cookie = yield* sessionCookie(w.admin)
      const contradiction = yield* http(
        `/api/admin/actions/${w.refund.id}`,
        json("PATCH", { hitl_mode: "shadow", requires_confirmation: true }, { cookie })
      )
      assert.strictEqual(contradiction.status, 400)
      const unknown = yield* http(
        `/api/admin/actions/${w.refund.id}`,
        json("PATCH", { hitl_mode: "sometimes" }, { cookie })
      )
      assert.strictEqual(unknown.status, 400)
    }))

  it.effect("a key's direct execution is autonomous, triggered by the key with its name", () =>
    Effect.gen(function*() {
      const w = yield* world
      const keyClient = yield* w.server.client({ apiKey: w.key.key })
      yield* keyClient.api.actions.execute({ params: { id: w.refund.id }, payload: { params: { order_id: 7 } } })
      const [row] = yield* provenanceOf(w.officer, w.refund.id)
      assert.deepInclude(row, {
        action_id: w.refund.id,
        action_name: "refund_order",
        channel: "direct",
        supervision: "autonomous",
        on_behalf_of: null,
        confirmed_by: null,
        agent_id: null,
        chat_id: null,
        success: true,
        status_code: 200,
        remote_called: true
      })
      assert.deepStrictEqual(row.triggered_by, { type: "key", id: w.key.id, name: w.keyName })
      assert.deepStrictEqual(row.hitl_snapshot, { version: 1, mode: "auto" })
    }))

  it.effect("a confirmation in chat is human_confirmed, with the verbatim text, the request it answered and the version in force", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* setMode(w, w.refund.id, "confirm")
      const ask = yield* keyChat(w, "Please refund order 1234")
      assert.match(ask.text, /Please confirm: run refund_order/)
      assert.strictEqual(w.target.received.length, 0)
      const reply = "yes, \"do it\",\nnow =1+1"
      yield* keyChat(w, reply, ask.chatId)
      assert.strictEqual(w.target.received.length, 1)
      const [row] = yield* provenanceOf(w.officer, w.refund.id)
      assert.deepInclude(row, {
        supervision: "human_confirmed",
        channel: "chat",
        chat_id: ask.chatId,
        agent_id: w.agent.id
      })
      assert.deepStrictEqual(row.triggered_by, { type: "agent", id: w.agent.id, name: "Helper" })
      assert.deepStrictEqual(row.on_behalf_of, { type: "key", id: w.key.id, name: w.keyName })
      assert.deepInclude(row.confirmed_by, { user_id: null, key_id: w.key.id, name: w.keyName, text: reply })
      assert.match(row.confirmed_by?.asked ?? "", /^Please confirm: run refund_order with order_id: 1234\?/)
      assert.deepStrictEqual(row.hitl_snapshot, { version: 2, mode: "confirm" })
    }))

  it.effect("a signed-in user's chat message with no confirmation step is human_triggered_auto, naming the user", () =>
    Effect.gen(function*() {
      const w = yield* world
      const engine = yield* ChatEngine
      const caller: UserPrincipal = {
        _tag: "User",
        tenantId: w.me.tenant_id,
        userId: w.me.user_id,
        sessionId: crypto.randomUUID(),
        roleId: w.me.role_id,
        platformTenant: false,
        email: w.me.email,
        nombre: w.me.nombre
      }
      const turn = yield* engine.send({ caller, space: w.space.code, message: "Please refund order 55" })
      yield* Stream.runDrain(turn.events)
      assert.strictEqual(w.target.received.length, 1)
      const [row] = yield* provenanceOf(w.officer, w.refund.id)
      assert.deepInclude(row, {
        supervision: "human_triggered_auto",
        channel: "chat",
        chat_id: turn.chatId,
        confirmed_by: null
      })
      assert.deepStrictEqual(row.triggered_by, { type: "agent", id: w.agent.id, name: "Helper" })
      assert.deepStrictEqual(row.on_behalf_of, { type: "user", id: w.me.user_id, name: w.me.nombre })
    }))

  it.effect("shadow mode records the resolved request, makes no remote call, and the answer says so — directly and in chat", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* setMode(w, w.refund.id, "shadow")
      const keyClient = yield* w.server.client({ apiKey: w.key.key })
      const direct = yield* keyClient.api.actions.execute({
        params: { id: w.refund.id },
        payload: { params: { order_id: 9 } }
      })
      assert.deepInclude(direct, { success: true, status_code: 202 })
      assert.deepInclude(direct.response as object, { shadow: true })
      assert.match((direct.response as { message: string }).message, /Shadow mode: refund_order was not run/)
      assert.deepInclude((direct.response as { request: object }).request, {
        method: "POST",
        url: `${w.target.url}/refunds`,
        body: { order_id: 9 }
      })
      const chat = yield* keyChat(w, "Please refund order 10")
      assert.match(chat.text, /Shadow mode: refund_order was not run/)
      assert.strictEqual(w.target.received.length, 0)

      const rows = yield* provenanceOf(w.officer, w.refund.id)
      assert.deepStrictEqual(rows.map((r) => [r.channel, r.supervision, r.remote_called]), [
        ["direct", "shadow", false],
        ["chat", "shadow", false]
      ])
      const sql = yield* SqlClient.SqlClient
      const [recorded] = yield* sql<{ shadow_request: { url: string; body: unknown } }>`
        SELECT shadow_request FROM action_executions WHERE id = ${rows[0].execution_id}`
      assert.deepInclude(recorded.shadow_request, { url: `${w.target.url}/refunds`, body: { order_id: 9 } })
    }))

  it.effect("provenance pages by cursor and filters by supervision; bad input is 400", () =>
    Effect.gen(function*() {
      const w = yield* world
      const keyClient = yield* w.server.client({ apiKey: w.key.key })
      for (const order of [1, 2, 3, 4, 5]) {
        yield* keyClient.api.actions.execute({ params: { id: w.refund.id }, payload: { params: { order_id: order } } })
      }
      yield* setMode(w, w.refund.id, "shadow")
      yield* keyClient.api.actions.execute({ params: { id: w.refund.id }, payload: { params: { order_id: 6 } } })
      const rows = yield* provenanceOf(w.officer, w.refund.id)
      assert.strictEqual(rows.length, 6)
      assert.strictEqual(new Set(rows.map((r) => r.execution_id)).size, 6)
      const first = yield* w.officer.api.compliance.provenance({ query: { action_id: w.refund.id, limit: 4 } })
      assert.strictEqual(first.count, 4)
      assert.isString(first.next_cursor)
      const shadowOnly = yield* w.officer.api.compliance.provenance({
        query: { action_id: w.refund.id, supervision: "shadow" }
      })
      assert.deepStrictEqual(shadowOnly.rows.map((r) => r.supervision), ["shadow"])
      assert.isNull(shadowOnly.next_cursor)

      const cookie = yield* sessionCookie(w.officer)
      for (
        const query of [
          "cursor=nope",
          "from=2025-02-30",
          "from=2025-03-02&to=2025-03-01",
          "limit=0",
          "supervision=sometimes",
          "action_id=x"
        ]
      ) {
        const bad = yield* http(`/api/compliance/provenance?${query}`, { headers: { cookie } })
        assert.strictEqual(bad.status, 400, query)
        assert.isString(bad.body.error)
      }
    }))

  it.effect("403 on all four endpoints with the flag off, or without the Security Officer role", () =>
    Effect.gen(function*() {
      const w = yield* world
      const calls = (client: Sdk.Connected): ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> => [
        client.api.compliance.provenance({ query: {} }),
        client.api.compliance.integrity(),
        client.api.compliance.hitlMap({ query: {} }),
        client.api.compliance.export({ query: { format: "json" } })
      ]
      yield* w.admin.api.admin.createUser({
        payload: { email: "plain-admin@example.com", nombre: "Admin", password, role_id: "r_admin" }
      })
      const plainAdmin = yield* signIn("plain-admin@example.com", password)
      for (const call of calls(plainAdmin)) {
        const refused = yield* Effect.flip(call)
        assert.strictEqual(refused._tag, "RoleMissing")
      }
      yield* w.admin.api.admin.updateFlags({ payload: { feature_compliance_pack: false } })
      for (const call of calls(w.officer)) {
        const refused = yield* Effect.flip(call)
        assert.strictEqual(refused._tag, "FeatureDisabled")
        assert.match(messageOf(refused), /feature_compliance_pack/)
      }
      // The flag is decided before the query is read: 403 whatever it holds.
      const cookie = yield* sessionCookie(w.officer)
      for (
        const path of ["provenance?limit=0", "hitl-map?days=abc", "export?format=xlsx", "provenance?from=yesterday"]
      ) {
        const refused = yield* http(`/api/compliance/${path}`, { headers: { cookie } })
        assert.strictEqual(refused.status, 403, path)
        assert.strictEqual(refused.body._tag, "FeatureDisabled", path)
      }
      yield* w.admin.api.admin.updateFlags({ payload: { feature_compliance_pack: true } })
      const integrity = yield* w.officer.api.compliance.integrity()
      assert.isTrue(integrity.valid)
    }))

  it.effect("the HITL map flags confirm-mode actions run without a confirmation and shadow-mode actions that made real calls", () =>
    Effect.gen(function*() {
      const w = yield* world
      const keyClient = yield* w.server.client({ apiKey: w.key.key })
      const other = yield* w.admin.api.actionsAdmin.create({
        payload: {
          name: `ping-${crypto.randomUUID().slice(0, 6)}`,
          description: "Ping",
          http_method: "GET",
          url: `${w.target.url}/ping`,
          parameters: [],
          is_active: true
        }
      })
      yield* w.admin.api.agentsAdmin.assignActions({
        params: { id: w.agent.id },
        payload: { action_ids: [w.refund.id, other.id] }
      })
      yield* keyClient.api.actions.execute({ params: { id: other.id }, payload: {} })
      yield* setMode(w, other.id, "shadow")
      yield* setMode(w, w.refund.id, "confirm")
      yield* keyClient.api.actions.execute({ params: { id: w.refund.id }, payload: { params: { order_id: 1 } } })

      const map = yield* w.officer.api.compliance.hitlMap({ query: { days: 7 } })
      assert.strictEqual(map.days, 7)
      const refund = map.actions.find((a) => a.action_id === w.refund.id)!
      assert.deepInclude(refund, { config: { version: 2, mode: "confirm" }, mismatch: true })
      assert.deepStrictEqual(refund.mismatches, { confirm_without_confirmation: 1, shadow_with_real_call: 0 })
      assert.strictEqual(refund.executions.autonomous, 1)
      const ping = map.actions.find((a) => a.action_id === other.id)!
      assert.deepInclude(ping, { config: { version: 2, mode: "shadow" }, mismatch: true })
      assert.deepStrictEqual(ping.mismatches, { confirm_without_confirmation: 0, shadow_with_real_call: 1 })
    }))
})

/** Appends `count` entries to the admin tenant's admin_audit_log (space creations). */
const activity = (w: World, count: number) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i),
    (i) =>
      w.admin.api.admin.createSpace({
        payload: { code: `c-${crypto.randomUUID().slice(0, 6)}-${i}`, name: `Chain ${i}` }
      }),
    { discard: true }
  )

/** A chain's rows of the admin's tenant, in order. */
const chainRows = (table: "audit_logs" | "admin_audit_log") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; seq: string }>`
      SELECT id, seq::text AS seq FROM ${sql(table)}
      WHERE tenant_id = (SELECT tenant_id FROM users WHERE email = 'admin@example.com') ORDER BY seq`)

layer(testServer(), serverSuite)("GET /api/compliance/integrity", (it) => {
  it.effect("finds an altered payload and a deleted row, naming the first invalid row; /api/audit/verify agrees", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* activity(w, 8)
      const clean = yield* w.officer.api.compliance.integrity()
      assert.isTrue(clean.valid)
      assert.deepInclude(clean.admin_audit_log, { valid: true, entries_invalid: 0, first_invalid_id: null })
      assert.isString(clean.admin_audit_log.head_hash)
      assert.isTrue(clean.admin_audit_log.entries_checked >= 8)

      const sql = yield* SqlClient.SqlClient
      const rows = yield* chainRows("admin_audit_log")
      const last = rows.length

      // A payload UPDATE.
      yield* sql`UPDATE admin_audit_log SET data = jsonb_set(data, '{name}', '"forged"') WHERE id = ${
        rows[last - 3].id
      }`
      const altered = yield* w.officer.api.compliance.integrity()
      assert.deepInclude(altered.admin_audit_log, {
        valid: false,
        entries_invalid: 1,
        first_invalid_id: rows[last - 3].id
      })
      assert.isFalse(altered.valid)
      assert.isTrue(altered.audit_logs.valid)
      const verify = yield* w.officer.api.audit.verify()
      assert.strictEqual(verify.first_invalid_id, rows[last - 3].id)

      // A deleted row, earlier in the chain: the row after it is named first.
      yield* sql`DELETE FROM admin_audit_log WHERE id = ${rows[last - 6].id}`
      const deleted = yield* w.officer.api.compliance.integrity()
      assert.strictEqual(deleted.admin_audit_log.first_invalid_id, rows[last - 5].id)
      assert.strictEqual(deleted.admin_audit_log.entries_invalid, 2)
    }))
})

layer(testServer(), serverSuite)("GET /api/compliance/integrity, reordering", (it) => {
  it.effect("finds two rows whose order was swapped", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* activity(w, 5)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* chainRows("admin_audit_log")
      const [a, b] = [rows[rows.length - 3], rows[rows.length - 2]]
      // Swap their positions (three steps: seq is unique per tenant).
      yield* sql`UPDATE admin_audit_log SET seq = -1 WHERE id = ${a.id}`
      yield* sql`UPDATE admin_audit_log SET seq = ${a.seq}::bigint WHERE id = ${b.id}`
      yield* sql`UPDATE admin_audit_log SET seq = ${b.seq}::bigint WHERE id = ${a.id}`
      const swapped = yield* w.officer.api.compliance.integrity()
      assert.deepInclude(swapped.admin_audit_log, { valid: false, first_invalid_id: b.id })
      const verify = yield* w.officer.api.audit.verify()
      assert.strictEqual(verify.chains.admin_audit_log.first_invalid_id, b.id)
    }))
})

layer(testServer(), serverSuite)("GET /api/compliance/export", (it) => {
  it.effect("streams an RFC 4180 CSV attachment that csv-parse reads back: commas, quotes, line breaks, formulas neutralised", () =>
    Effect.gen(function*() {
      const w = yield* world
      const formula = yield* w.admin.api.actionsAdmin.create({
        payload: {
          name: "=HYPERLINK(\"http://evil\",\"x\")",
          description: "d",
          http_method: "GET",
          url: `${w.target.url}/f`,
          parameters: [],
          is_active: true
        }
      })
      const evilKey = yield* w.admin.api.keys.create({
        payload: { name: "@key, \"quoted\"\r\nname", scopes: ["actions"], rate_limit_rpm: 1000 }
      })
      const evil = yield* w.server.client({ apiKey: evilKey.key })
      yield* evil.api.actions.execute({ params: { id: formula.id }, payload: {} })
      yield* setMode(w, w.refund.id, "confirm")
      const ask = yield* keyChat(w, "Please refund order 42")
      const reply = "yes, \"sure\",\nplease\r\n-and +now"
      yield* keyChat(w, reply, ask.chatId)

      const cookie = yield* sessionCookie(w.officer)
      const today = new Date().toISOString().slice(0, 10)
      const response = yield* http(`/api/compliance/export?format=csv&to=${today}`, { headers: { cookie } })
      assert.strictEqual(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/csv/)
      const from = new Date(Date.parse(`${today}T00:00:00Z`) - 30 * 86_400_000).toISOString().slice(0, 10)
      assert.strictEqual(
        response.headers.get("content-disposition"),
        `attachment; filename="provenance-${from}-${today}.csv"`
      )
      const text = response.body as string
      assert.isTrue(text.endsWith("\r\n"))
      // Every record ends with CRLF; a bare LF only inside a quoted field.
      assert.strictEqual(text.split("\r\n")[0].split(",")[0], "execution_id")

      const records: Array<Record<string, string>> = parse(text, { columns: true, record_delimiter: "\r\n" })
      const byAction = (id: string) => records.find((r) => r.action_id === id)!
      const formulaRow = byAction(formula.id)
      assert.strictEqual(formulaRow.action_name, "'=HYPERLINK(\"http://evil\",\"x\")")
      assert.strictEqual(formulaRow.triggered_by_name, "'@key, \"quoted\"\r\nname")
      assert.deepInclude(formulaRow, {
        supervision: "autonomous",
        success: "true",
        status_code: "200",
        hitl_mode: "auto",
        hitl_version: "1"
      })
      const confirmed = byAction(w.refund.id)
      assert.strictEqual(confirmed.confirmation_text, reply)
      assert.deepInclude(confirmed, {
        supervision: "human_confirmed",
        triggered_by_type: "agent",
        triggered_by_name: "Helper",
        on_behalf_of_type: "key"
      })

      const asJson = yield* http(`/api/compliance/export?format=json`, { headers: { cookie } })
      assert.strictEqual(asJson.status, 200)
      assert.match(asJson.headers.get("content-disposition") ?? "", /provenance-.*\.json"$/)
      const rows = asJson.body as Array<Compliance.ProvenanceRow>
      assert.strictEqual(rows.length, records.length)
      assert.strictEqual(rows.find((r) => r.action_id === w.refund.id)?.confirmed_by?.text, reply)
      assert.match(asJson.headers.get("content-type") ?? "", /^application\/json/)
      // The contract names both media types the download may have.
      const contract = yield* http("/openapi.json")
      const media = contract.body.paths["/api/compliance/export"].get.responses["200"].content
      assert.deepStrictEqual(Object.keys(media).sort(), ["application/json", "text/csv"])

      const unknown = yield* http(`/api/compliance/export?format=xlsx`, { headers: { cookie } })
      assert.strictEqual(unknown.status, 400)
      const badDate = yield* http(`/api/compliance/export?from=yesterday`, { headers: { cookie } })
      assert.strictEqual(badDate.status, 400)
    }))

  it.effect("an empty period is the header row alone; JSON is []", () =>
    Effect.gen(function*() {
      const w = yield* world
      const cookie = yield* sessionCookie(w.officer)
      const csv = yield* http(`/api/compliance/export?from=2001-01-01&to=2001-01-31`, { headers: { cookie } })
      assert.strictEqual(csv.status, 200)
      assert.strictEqual((csv.body as string).split("\r\n").length, 2)
      assert.strictEqual((csv.body as string).split("\r\n")[1], "")
      const empty = yield* http(`/api/compliance/export?format=json&from=2001-01-01&to=2001-01-31`, {
        headers: { cookie }
      })
      assert.deepStrictEqual(empty.body, [])
    }))
})
