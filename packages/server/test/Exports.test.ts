/**
 * Exports and adoption over HTTP (spec: /api/export/*, /api/audit/adoption):
 * the conversations and metrics CSVs read back with csv-parse, the ROI page
 * parsed as HTML with its charts and no external asset, its tenant settings,
 * and adoption counts exact on known data — each in a tenant of its own.
 */
import type { UserPrincipal } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import { assert, layer } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect, Stream } from "effect"
import { parse as parseHtml } from "parse5"
import { ChatEngine } from "../src/Chat/ChatEngine.ts"
import { spaceWithAgent } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import {
  http,
  json,
  layer as testServer,
  secondTenant,
  serverSuite,
  sessionCookie,
  signIn,
  TestServer
} from "./TestServer.ts"

const today = () => new Date().toISOString().slice(0, 10)

/**
 * A fresh tenant: a space with an agent that has a `ping` action, a chat key
 * bound to the space, and its admin signed in (as a client and as a principal).
 */
const world = Effect.gen(function*() {
  const server = yield* TestServer
  const { client: admin } = yield* secondTenant()
  const target = yield* localServer(() => jsonAnswer(200, { ok: true }))
  const { agent, space } = yield* spaceWithAgent({ name: "Concierge", summary: "Everything" }, admin)
  const ping = yield* admin.api.actionsAdmin.create({
    payload: {
      name: "ping",
      description: "Ping",
      http_method: "GET",
      url: `${target.url}/ping`,
      parameters: [],
      is_active: true
    }
  })
  yield* admin.api.agentsAdmin.assignActions({ params: { id: agent.id }, payload: { action_ids: [ping.id] } })
  const created = yield* admin.api.keys.create({
    payload: { name: "Widget", scopes: ["chat", "actions"], space_id: space.id, rate_limit_rpm: 10_000 }
  })
  const keyClient = yield* server.client({ apiKey: created.key })
  const me = yield* admin.api.auth.me()
  const principal: UserPrincipal = {
    _tag: "User",
    tenantId: me.tenant_id,
    userId: me.user_id,
    sessionId: crypto.randomUUID(),
    roleId: me.role_id,
    platformTenant: false,
    email: me.email,
    nombre: me.nombre
  }
  return { server, admin, space, agent, ping, key: created.key, keyClient, me, principal }
}).pipe(Effect.orDie)

type World = Effect.Success<typeof world>

const keyChat = (w: World, message: string) =>
  Effect.promise(async () => {
    for await (const _ of Sdk.chat({ baseUrl: w.server.baseUrl, apiKey: w.key }, { message })) void _
  })

const sessionChat = (w: World, message: string) =>
  Effect.gen(function*() {
    const engine = yield* ChatEngine
    const turn = yield* engine.send({ caller: w.principal, space: w.space.code, message })
    yield* Stream.runDrain(turn.events)
  }).pipe(Effect.orDie)

const get = (w: World, path: string) =>
  Effect.flatMap(sessionCookie(w.admin), (cookie) => http(path, { headers: { cookie } }))

layer(testServer(), serverSuite)("exports", (it) => {
  it.effect("conversations: one CSV row per message that csv-parse reads back, content verbatim and formulas neutralised", () =>
    Effect.gen(function*() {
      const w = yield* world
      const tricky = "=2+3, \"quoted\"\nsecond line"
      yield* keyChat(w, tricky)
      yield* sessionChat(w, "@Concierge hello, \"friend\"")
      const response = yield* get(w, `/api/export/conversations?group_id=${w.space.id}`)
      assert.strictEqual(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/csv/)
      assert.match(
        response.headers.get("content-disposition") ?? "",
        /^attachment; filename="conversations-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/
      )
      const text = response.body as string
      assert.strictEqual(
        text.split("\r\n")[0],
        "chat_id,message_id,space_code,agent_name,role,author,content,created_at"
      )
      const rows: Array<Record<string, string>> = parse(text, { columns: true, record_delimiter: "\r\n" })
      assert.strictEqual(rows.length, 4)
      assert.deepStrictEqual(rows.map((r) => r.role), ["user", "agent", "user", "agent"])
      assert.deepInclude(rows[0], {
        content: `'${tricky}`,
        author: "API key Widget",
        agent_name: "Concierge",
        space_code: w.space.code
      })
      assert.deepInclude(rows[1], { author: "Concierge", agent_name: "Concierge" })
      assert.deepInclude(rows[2], { content: "@Concierge hello, \"friend\"".replace(/^@/, "'@"), author: w.me.nombre })
      assert.isTrue(rows.every((r) => !Number.isNaN(Date.parse(r.created_at))))

      const empty = yield* get(w, `/api/export/conversations?from=2001-01-01&to=2001-01-02`)
      assert.strictEqual(empty.body, "chat_id,message_id,space_code,agent_name,role,author,content,created_at\r\n")
      for (const query of ["from=2025-13-01", "to=yesterday", "from=2025-03-02&to=2025-03-01"]) {
        const bad = yield* get(w, `/api/export/conversations?${query}`)
        assert.strictEqual(bad.status, 400, query)
        assert.isString(bad.body.error)
      }
      assert.strictEqual((yield* get(w, `/api/export/conversations?group_id=${crypto.randomUUID()}`)).status, 404)
      // A space's code names it too; an unknown one says what group_id takes.
      const byCode = yield* get(w, `/api/export/conversations?group_id=${w.space.code}`)
      assert.strictEqual(byCode.status, 200)
      assert.strictEqual(byCode.body, (yield* get(w, `/api/export/conversations?group_id=${w.space.id}`)).body)
      const unknown = yield* get(w, "/api/export/conversations?group_id=no-such-space")
      assert.strictEqual(unknown.status, 404)
      assert.match(unknown.body.error, /group_id takes a space's id or code/)
      const nul = yield* get(w, "/api/export/conversations?group_id=%00")
      assert.strictEqual(nul.status, 400)
      assert.match(nul.body.error, /^Invalid query parameter: group_id: must not contain NUL/)
    }))

  it.effect("metrics: a CSV row per day and space with chats, messages, tokens and actions", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* keyChat(w, "hello")
      yield* keyChat(w, "hello again")
      yield* w.keyClient.api.actions.execute({ params: { id: w.ping.id }, payload: {} })
      const response = yield* get(w, `/api/export/metrics?from=${today()}&to=${today()}`)
      assert.strictEqual(response.status, 200)
      const rows: Array<Record<string, string>> = parse(response.body as string, {
        columns: true,
        record_delimiter: "\r\n"
      })
      assert.strictEqual(rows.length, 1)
      assert.deepInclude(rows[0], {
        date: today(),
        space_id: w.space.id,
        space_code: w.space.code,
        chats: "2",
        messages: "4",
        actions_succeeded: "1",
        actions_failed: "0"
      })
      assert.isTrue(Number(rows[0].tokens_input) > 0)
      assert.isTrue(Number(rows[0].tokens_output) > 0)
      assert.strictEqual((yield* get(w, `/api/export/metrics?to=2025-02-30`)).status, 400)
    }))

  it.effect("the ROI report is one printable HTML page with inline SVG charts, no script and no external asset", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* keyChat(w, "hello")
      yield* w.keyClient.api.actions.execute({ params: { id: w.ping.id }, payload: {} })
      const settings = yield* w.admin.api.exports.updateRoiSettings({
        payload: { minutes_saved_per_message: 30, minutes_saved_per_action: 90, token_cost_per_1k: 0.5 }
      })
      assert.deepStrictEqual(settings, {
        minutes_saved_per_message: 30,
        minutes_saved_per_action: 90,
        token_cost_per_1k: 0.5
      })
      const partial = yield* w.admin.api.exports.updateRoiSettings({ payload: { minutes_saved_per_action: 30 } })
      assert.deepStrictEqual(partial, {
        minutes_saved_per_message: 30,
        minutes_saved_per_action: 30,
        token_cost_per_1k: 0.5
      })
      const cookie = yield* sessionCookie(w.admin)
      const negative = yield* http(
        "/api/export/roi-settings",
        json("PUT", { minutes_saved_per_message: -1 }, { cookie })
      )
      assert.strictEqual(negative.status, 400)
      // A string where a number belongs is named as such (not as the JSON spellings of NaN and Infinity).
      const text = yield* http("/api/export/roi-settings", json("PUT", { token_cost_per_1k: "abc" }, { cookie }))
      assert.strictEqual(text.status, 400)
      assert.match(text.body.error, /token_cost_per_1k/)
      assert.notMatch(text.body.error, /Infinity|NaN/)

      const response = yield* get(w, "/api/export/roi-report?days=7")
      assert.strictEqual(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/html/)
      assert.match(response.headers.get("content-security-policy") ?? "", /default-src 'none'/)
      const html = response.body as string
      const document = parseHtml(html)
      type Node = {
        nodeName: string
        attrs?: Array<{ name: string; value: string }>
        childNodes?: Array<Node>
        content?: Node
      }
      const all: Array<Node> = []
      const walk = (node: Node) => {
        all.push(node)
        for (const child of node.childNodes ?? []) walk(child)
        if (node.content !== undefined) walk(node.content)
      }
      walk(document as unknown as Node)
      const named = (name: string) => all.filter((n) => n.nodeName === name)
      assert.strictEqual(named("html").length, 1)
      assert.deepStrictEqual(named("svg").map((n) => n.attrs?.find((a) => a.name === "id")?.value), [
        "chart-supervision",
        "chart-trend"
      ])
      assert.isTrue(named("rect").length >= 4)
      assert.strictEqual(named("script").length, 0)
      assert.strictEqual(named("link").length, 0)
      assert.strictEqual(named("img").length, 0)
      const external = all.flatMap((n) => n.attrs ?? []).filter((a) => ["src", "href"].includes(a.name))
      assert.deepStrictEqual(external, [])
      assert.include(html, "@media print")
      // 1 message answered × 30 min + 1 action × 30 min = 1.0 hour.
      assert.match(html, /Estimated hours saved<b>1\.0<\/b>/)
      assert.match(html, /Token cost<b>\d/)
      assert.include(html, "Concierge")
      assert.include(html, "ping")

      const plain = yield* secondTenantUser(w)
      const refused = yield* plain.api.exports.roiReport({ query: {} }).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RoleMissing")
      assert.strictEqual((yield* get(w, "/api/export/roi-report?days=0")).status, 400)
    }))
})

/** An r_user of the world's tenant, signed in. */
const secondTenantUser = (w: World) =>
  Effect.gen(function*() {
    const email = `user-${crypto.randomUUID().slice(0, 8)}@example.com`
    yield* w.admin.api.admin.createUser({
      payload: { email, nombre: "Plain", password: "Correct-Horse-9", role_id: "r_user" }
    })
    return yield* signIn(email, "Correct-Horse-9")
  }).pipe(Effect.orDie)

layer(testServer(), serverSuite)("GET /api/audit/adoption", (it) => {
  it.effect("counts active users, messages and actions exactly, per day, in total and per space", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* keyChat(w, "hello")
      yield* keyChat(w, "hello again")
      yield* sessionChat(w, "hi there")
      yield* sessionChat(w, "@Concierge please ping")
      yield* w.keyClient.api.actions.execute({ params: { id: w.ping.id }, payload: {} })

      const report = yield* w.admin.api.audit.adoption({ query: { days: 3 } })
      assert.strictEqual(report.days, 3)
      assert.strictEqual(report.to, today())
      assert.strictEqual(report.daily.length, 3)
      assert.strictEqual(report.daily[0].date, report.from)
      // 4 messages people sent; 2 actions (the session user's chat ran ping, the key ran it directly); 1 signed-in user.
      assert.deepStrictEqual(report.daily[2], { date: today(), active_users: 1, messages: 4, actions: 2 })
      assert.deepStrictEqual(report.daily.slice(0, 2).map((d) => [d.active_users, d.messages, d.actions]), [[0, 0, 0], [
        0,
        0,
        0
      ]])
      assert.deepStrictEqual(report.totals, { active_users: 1, messages: 4, actions: 2 })
      assert.deepStrictEqual(report.by_space, [{
        space_id: w.space.id,
        space_code: w.space.code,
        active_users: 1,
        messages: 4,
        actions: 2
      }])

      const standard = yield* w.admin.api.audit.adoption({ query: {} })
      assert.strictEqual(standard.days, 30)
      assert.strictEqual(standard.daily.length, 30)
      for (const days of ["0", "91", "abc", "1.5"]) {
        const bad = yield* get(w, `/api/audit/adoption?days=${days}`)
        assert.strictEqual(bad.status, 400, days)
      }
      const plain = yield* secondTenantUser(w)
      const refused = yield* plain.api.audit.adoption({ query: {} }).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RoleMissing")
    }))
})
