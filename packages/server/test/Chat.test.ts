/**
 * Chat, knowledge and usage over HTTP (spec: POST /v1/chat/completions and its
 * events, GET /v1/chat/history, /v1/knowledge, /v1/usage): SSE framing byte
 * for byte, errors before the stream, the SDK's typed stream, an answer
 * grounded in an ingested document, slot filling ending in a real action
 * call, a client that goes away, history and usage — through the SDK and raw
 * HTTP against the test server, with the embedded models.
 */
import type { Chat } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import { assert, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { spaceWithAgent, ticketAction } from "./Catalog.ts"
import { refundPolicy } from "./Documents.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import {
  bearer,
  createKey,
  http,
  json,
  layer as testServer,
  secondTenant,
  serverSuite,
  TestServer
} from "./TestServer.ts"

/** A space with a primary support agent and a billing agent; the admin client and a chat key. */
const world = Effect.gen(function*() {
  const server = yield* TestServer
  const admin = yield* server.admin
  const { agent: support, space } = yield* spaceWithAgent(
    { name: "Support", summary: "Customer support: orders, returns and refunds" },
    admin
  )
  const travel = yield* admin.api.agentsAdmin.create({
    payload: {
      space_id: space.id,
      name: "Travel",
      summary: "Business travel: flights, hotels and trains",
      is_primary: false
    }
  })
  const { key } = yield* createKey(["chat", "files", "analytics", "agents"], {
    space_id: space.id,
    rate_limit_rpm: 10_000
  })
  return { admin, space, support, travel, key }
}).pipe(Effect.orDie)

/** Raw SSE turn: status, headers and the exact body text. */
const rawChat = (key: string, body: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* Effect.promise(() =>
      fetch(`${server.baseUrl}/v1/chat/completions`, json("POST", body, bearer(key)))
    )
    return { status: response.status, headers: response.headers, text: yield* Effect.promise(() => response.text()) }
  })

/** A turn through the SDK's typed stream. */
const sdkChat = (key: string, request: Chat.ChatRequest) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const events = yield* Stream.runCollect(Sdk.chatStream({ baseUrl: server.baseUrl, apiKey: key }, request)).pipe(
      Effect.provide(FetchHttpClient.layer)
    )
    const list = [...events]
    const info = list[0] as Extract<Chat.ChatEvent, { type: "agent_info" }>
    return { events: list, info, text: Sdk.collectText(list) }
  })

const ofType = (events: ReadonlyArray<Chat.ChatEvent>, type: string) =>
  events.filter((e) => "type" in e && e.type === type)

layer(testServer({ CRON_INTERVAL_MS: "500" }), serverSuite)("POST /v1/chat/completions", (it) => {
  it.effect("streams data: <json> events, agent_info first with X-Chat-Id, and data: [DONE] last", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { status, headers, text } = yield* rawChat(w.key, { message: "hello there" })
      assert.strictEqual(status, 200)
      assert.match(headers.get("content-type") ?? "", /^text\/event-stream/)
      const chatId = headers.get("x-chat-id")!
      assert.isString(chatId)
      assert.isTrue(text.endsWith("data: [DONE]\n\n"))
      const frames = text.split("\n\n").slice(0, -1)
      for (const frame of frames) assert.match(frame, /^data: /, `frame ${JSON.stringify(frame)}`)
      const payloads = frames.map((frame) => frame.slice("data: ".length))
      assert.strictEqual(payloads.at(-1), "[DONE]")
      const events = payloads.slice(0, -1).map((payload) => JSON.parse(payload))
      assert.deepInclude(events[0], { type: "agent_info", agent_id: w.support.id, chat_id: chatId })
      assert.isTrue(events.slice(1).some((event) => typeof event.text === "string"))
    }))

  it.effect("answers errors before the stream as JSON: 400, 401, 403, 404", () =>
    Effect.gen(function*() {
      const w = yield* world
      const empty = yield* rawChat(w.key, { message: "" })
      assert.strictEqual(empty.status, 400)
      assert.strictEqual(JSON.parse(empty.text)._tag, "InvalidRequest")
      // Text the database cannot store is refused before the stream, naming the field.
      for (
        const [payload, field] of [
          [{ message: "a\u0000b" }, "message"],
          [{ message: "hi", history: [{ role: "user", content: "x\u0000" }] }, "history"]
        ] as const
      ) {
        const nul = yield* rawChat(w.key, payload)
        assert.strictEqual(nul.status, 400, field)
        assert.match(JSON.parse(nul.text).error, new RegExp(`${field}.*must not contain NUL`))
      }
      const noKey = yield* http("/v1/chat/completions", json("POST", { message: "hi" }))
      assert.strictEqual(noKey.status, 401)
      const { key: agentsOnly } = yield* createKey(["agents"])
      const scope = yield* rawChat(agentsOnly, { message: "hi" })
      assert.strictEqual(scope.status, 403)
      assert.match(JSON.parse(scope.text).error, /`chat`/)
      const unknownChat = yield* rawChat(w.key, { message: "hi", chat_id: crypto.randomUUID() })
      assert.strictEqual(unknownChat.status, 404)
      const unknownSpace = yield* rawChat(w.key, { message: "hi", space: "nowhere" })
      assert.strictEqual(unknownSpace.status, 404)
    }))

  it.effect("a chat continues in its own space: naming another space with its chat_id is a 400, its own (code or id) is fine", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { space: other } = yield* spaceWithAgent({ name: "Elsewhere", summary: "Another space's agent" }, w.admin)
      const { key } = yield* createKey(["chat"], { rate_limit_rpm: 10_000 })
      const first = yield* sdkChat(key, { message: "hi", space: w.space.code })
      const chatId = first.info.chat_id
      const elsewhere = yield* rawChat(key, { message: "and now?", chat_id: chatId, space: other.code })
      assert.strictEqual(elsewhere.status, 400)
      const refusal = JSON.parse(elsewhere.text)
      assert.strictEqual(refusal._tag, "InvalidRequest")
      assert.match(refusal.error, /another space.*leave out space/)
      // Nothing was stored for the refused turn.
      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: key })
      const before = yield* keyClient.api.chat.history({ params: { chatId } })
      assert.isFalse(before.messages.some((m) => m.content === "and now?"))
      for (const own of [w.space.code, w.space.id]) {
        const again = yield* sdkChat(key, { message: `again by ${own}`, chat_id: chatId, space: own })
        assert.strictEqual(again.info.chat_id, chatId)
      }
      // An unknown space stays a 404, with or without a chat.
      assert.strictEqual((yield* rawChat(key, { message: "x", chat_id: chatId, space: "nowhere" })).status, 404)
    }))

  it.effect("429 with Retry-After when the key is over its limit", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { key } = yield* createKey(["chat"], { space_id: w.space.id, rate_limit_rpm: 1 })
      assert.strictEqual((yield* rawChat(key, { message: "hi" })).status, 200)
      const limited = yield* rawChat(key, { message: "hi again" })
      assert.strictEqual(limited.status, 429)
      assert.isNotNull(limited.headers.get("retry-after"))
    }))

  it.effect("routes by mention, and the SDK's typed stream and async iterator see the same events", () =>
    Effect.gen(function*() {
      const w = yield* world
      const travel = yield* sdkChat(w.key, { message: "@Travel can you book a train to Lyon?" })
      assert.strictEqual(travel.info.agent_id, w.travel.id)
      const server = yield* TestServer
      const iterated: Array<Chat.ChatEvent> = yield* Effect.promise(async () => {
        const out: Array<Chat.ChatEvent> = []
        for await (const event of Sdk.chat({ baseUrl: server.baseUrl, apiKey: w.key }, { message: "hello" })) {
          out.push(event)
        }
        return out
      })
      assert.strictEqual((iterated[0] as { type: string }).type, "agent_info")
      const refused = yield* Effect.promise(async () => {
        try {
          for await (const _ of Sdk.chat({ baseUrl: server.baseUrl, apiKey: "sk_live_nope" }, { message: "hi" })) void _
          return undefined
        } catch (error) {
          return error as { _tag: string }
        }
      })
      assert.strictEqual(refused?._tag, "Unauthenticated")
    }))

  it.effect("answers from an ingested document, citing its file, after ingestion reaches ready", () =>
    Effect.gen(function*() {
      const w = yield* world
      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: w.key })
      const accepted = yield* keyClient.api.knowledge.ingest({
        payload: { agent_id: w.support.id, filename: "refunds.md", content: refundPolicy }
      })
      assert.strictEqual(accepted.status, "pending")
      const ready = yield* Sdk.waitUntilReady(keyClient, { agentId: w.support.id, fileId: accepted.file_id }, {
        timeout: "60 seconds"
      })
      assert.strictEqual(ready.status, "ready")
      assert.strictEqual(ready.filename, "refunds.md")
      const answer = yield* sdkChat(w.key, { message: "How long does it take to get my refund?" })
      assert.match(answer.text, /14 business days/)
      assert.include(answer.text, "refunds.md")
      const detail = yield* keyClient.api.agents.get({ params: { id: w.support.id } })
      assert.deepInclude(detail.knowledge_files[0], { id: accepted.file_id, filename: "refunds.md", status: "ready" })
    }))

  it.effect("fills missing parameters over two turns, then runs the action: system_alert and component events", () =>
    Effect.gen(function*() {
      const w = yield* world
      const target = yield* localServer(() => jsonAnswer(201, { ticket_id: "T-1", status: "open" }))
      const action = yield* w.admin.api.actionsAdmin.create({ payload: ticketAction(target.url) })
      yield* w.admin.api.agentsAdmin.assignActions({
        params: { id: w.support.id },
        payload: { action_ids: [action.id] }
      })

      const first = yield* sdkChat(w.key, {
        message: "Please create a ticket with title: Printer on floor 3 is broken"
      })
      const form = ofType(first.events, "component")[0] as Extract<Chat.ChatEvent, { type: "component" }>
      assert.strictEqual(form.component_name, "parameter_form")
      assert.deepInclude(form.props, { missing: ["priority"] })
      assert.deepStrictEqual(ofType(first.events, "system_alert"), [])
      assert.strictEqual(target.received.length, 0)

      const second = yield* sdkChat(w.key, { message: "high", chat_id: first.info.chat_id })
      assert.deepStrictEqual(ofType(second.events, "system_alert"), [{
        type: "system_alert",
        data: { action_id: action.id, action_name: "create_ticket", success: true, status_code: 201 }
      }])
      const card = ofType(second.events, "component").find((e) =>
        (e as { component_name: string }).component_name === "action_result"
      )
      assert.isDefined(card)
      assert.deepStrictEqual(JSON.parse(target.received[0].body), {
        title: "Printer on floor 3 is broken",
        priority: "high"
      })

      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: w.key })
      const history = yield* keyClient.api.chat.history({ params: { chatId: first.info.chat_id } })
      assert.deepStrictEqual(history.messages.map((m) => m.role), ["user", "agent", "user", "agent"])
      assert.strictEqual(history.messages[0].content, "Please create a ticket with title: Printer on floor 3 is broken")
      assert.strictEqual(history.messages[1].agent_id, w.support.id)
      assert.isUndefined(history.messages[0].agent_id)
    }))

  it.effect("a client that disconnects mid-stream keeps its message in the history; the server carries on", () =>
    Effect.gen(function*() {
      const w = yield* world
      const server = yield* TestServer
      const controller = new AbortController()
      const chatId = yield* Effect.promise(async () => {
        const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
          ...json("POST", { message: "Tell me about returns please" }, bearer(w.key)),
          signal: controller.signal
        })
        const reader = response.body!.getReader()
        await reader.read()
        controller.abort()
        return response.headers.get("x-chat-id")!
      })
      const keyClient = yield* server.client({ apiKey: w.key })
      const history = yield* keyClient.api.chat.history({ params: { chatId } })
      assert.strictEqual(history.messages[0].content, "Tell me about returns please")
      assert.strictEqual(history.messages[0].role, "user")
      const next = yield* sdkChat(w.key, { message: "hello again", chat_id: chatId })
      assert.strictEqual(next.info.chat_id, chatId)
    }))

  it.effect("concurrent chats, stored together, each keep their own messages in order and count in usage", () =>
    Effect.gen(function*() {
      const w = yield* world
      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: w.key })
      const chats = 20
      const question = (i: number) => `Question number ${i}: how do returns work?`
      const first = yield* Effect.forEach(
        Array.from({ length: chats }, (_, i) => i),
        (i) => sdkChat(w.key, { message: question(i) }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(first.map((turn) => turn.info.chat_id)).size, chats)
      // Each chat continues with its own history, all at once again.
      const second = yield* Effect.forEach(
        first,
        (turn, i) => sdkChat(w.key, { message: `And number ${i} again, please`, chat_id: turn.info.chat_id }),
        { concurrency: "unbounded" }
      )
      yield* Effect.forEach(first, (turn, i) =>
        Effect.gen(function*() {
          assert.strictEqual(second[i].info.chat_id, turn.info.chat_id)
          const history = yield* keyClient.api.chat.history({ params: { chatId: turn.info.chat_id } })
          assert.deepStrictEqual(
            history.messages.map((m) => [m.role, m.content]),
            [
              ["user", question(i)],
              ["agent", turn.text],
              ["user", `And number ${i} again, please`],
              ["agent", second[i].text]
            ]
          )
          assert.strictEqual(history.messages[1].agent_id, turn.info.agent_id)
        }))
      const usage = yield* keyClient.api.usage.get({ query: { period: "24h" } })
      assert.strictEqual(usage.messages, 4 * chats)
    }))

  it.effect("GET /v1/chat/history: 404 for an unknown or another tenant's chat, 401 without a key", () =>
    Effect.gen(function*() {
      const w = yield* world
      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: w.key })
      assert.strictEqual(
        (yield* keyClient.api.chat.history({ params: { chatId: crypto.randomUUID() } }).pipe(Effect.flip))._tag,
        "NotFound"
      )
      const mine = yield* sdkChat(w.key, { message: "hello" })
      const other = yield* secondTenant()
      const space = yield* other.client.api.admin.createSpace({ payload: { code: "theirs", name: "Theirs" } })
      yield* other.client.api.agentsAdmin.create({
        payload: { space_id: space.id, name: "Theirs", summary: "", is_primary: true }
      })
      const theirKey = yield* createKey(["chat"], { as: other.client })
      const theirClient = yield* server.client({ apiKey: theirKey.key })
      assert.strictEqual(
        (yield* theirClient.api.chat.history({ params: { chatId: mine.info.chat_id } }).pipe(Effect.flip))._tag,
        "NotFound"
      )
      assert.strictEqual((yield* http(`/v1/chat/history/${mine.info.chat_id}`)).status, 401)
    }))

  it.effect("GET /v1/usage counts messages, tokens and successful executions for the period; other periods are 400", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* sdkChat(w.key, { message: "hello" })
      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: w.key })
      const usage = yield* keyClient.api.usage.get({ query: {} })
      assert.strictEqual(usage.period, "30d")
      assert.isTrue(usage.messages >= 2)
      assert.isTrue(usage.tokens.input > 0 && usage.tokens.output > 0)
      assert.strictEqual(usage.tokens.total, usage.tokens.input + usage.tokens.output)
      // The key is bound to its space: it sees that space's usage only; the tenant's executions (earlier tests) show to an unbound key.
      assert.deepStrictEqual(usage.by_space.map((s) => s.space_id), [w.space.id])
      const { key: tenantWide } = yield* createKey(["analytics"])
      const tenant = yield* (yield* server.client({ apiKey: tenantWide })).api.usage.get({ query: {} })
      assert.isTrue(tenant.successful_action_executions >= 1)
      const mine = usage.by_space.find((s) => s.space_id === w.space.id)
      assert.isDefined(mine)
      assert.isTrue(mine!.messages >= 2)
      const day = yield* keyClient.api.usage.get({ query: { period: "24h" } })
      assert.strictEqual(day.period, "24h")
      const bad = yield* http("/v1/usage?period=1y", { headers: bearer(w.key) })
      assert.strictEqual(bad.status, 400)
      const { key: chatOnly } = yield* createKey(["chat"])
      assert.strictEqual((yield* http("/v1/usage", { headers: bearer(chatOnly) })).status, 403)
    }))
})

layer(testServer({ CRON_INTERVAL_MS: "500" }), serverSuite)("/v1/knowledge", (it) => {
  it.effect("ingest: 201 pending → ready; list; delete; 404 for an unknown agent or file; a binary document fails", () =>
    Effect.gen(function*() {
      const w = yield* world
      const server = yield* TestServer
      const keyClient = yield* server.client({ apiKey: w.key })
      const unknownAgent = yield* keyClient.api.knowledge.ingest({
        payload: { agent_id: crypto.randomUUID(), filename: "x.txt", content: "text" }
      }).pipe(Effect.flip)
      assert.strictEqual(unknownAgent._tag, "NotFound")

      const accepted = yield* keyClient.api.knowledge.ingest({
        payload: { agent_id: w.support.id, filename: "refunds.md", content: refundPolicy }
      })
      assert.deepInclude(accepted, { status: "pending" })
      const ready = yield* Sdk.waitUntilReady(keyClient, { agentId: w.support.id, fileId: accepted.file_id }, {
        timeout: "60 seconds"
      })
      assert.strictEqual(ready.size_bytes, new TextEncoder().encode(refundPolicy).length)
      assert.isAbove(ready.content_summary.length, 0)
      assert.match(ready.uploaded_at, /^\d{4}-\d{2}-\d{2}T/)

      const binary = yield* keyClient.api.knowledge.ingest({
        payload: { agent_id: w.support.id, filename: "image.png", content: "\u0000\u0001PNG" }
      })
      const failed = yield* Sdk.waitUntilReady(keyClient, { agentId: w.support.id, fileId: binary.file_id }, {
        timeout: "60 seconds"
      }).pipe(Effect.flip)
      assert.strictEqual(failed._tag, "IngestionNotReady")
      const { files } = yield* keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
      const failedFile = files.find((f) => f.id === binary.file_id)!
      assert.strictEqual(failedFile.status, "failed")
      assert.isString(failedFile.error)

      const deleted = yield* keyClient.api.knowledge.delete({ params: { id: accepted.file_id } })
      assert.strictEqual(deleted.success, true)
      assert.strictEqual(
        (yield* keyClient.api.knowledge.delete({ params: { id: accepted.file_id } }).pipe(Effect.flip))._tag,
        "NotFound"
      )
      const after = yield* keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
      assert.isFalse(after.files.some((f) => f.id === accepted.file_id))
    }))

  it.effect("knowledge:read lists but cannot ingest (403); knowledge:write ingests", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { key: reader } = yield* createKey(["knowledge:read"])
      assert.strictEqual((yield* http("/v1/knowledge", { headers: bearer(reader) })).status, 200)
      const refused = yield* http(
        "/v1/knowledge/ingest",
        json("POST", { agent_id: w.support.id, filename: "a.txt", content: "x" }, bearer(reader))
      )
      assert.strictEqual(refused.status, 403)
      const { key: writer } = yield* createKey(["knowledge:write"])
      const ok = yield* http(
        "/v1/knowledge/ingest",
        json("POST", { agent_id: w.support.id, filename: "a.txt", content: "hello" }, bearer(writer))
      )
      assert.strictEqual(ok.status, 201)
    }))
})
