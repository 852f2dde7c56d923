/**
 * The space binding on every `/v1` endpoint (issue #8, item 3): a key bound
 * to one space reaches nothing of another, and whatever lies outside answers
 * exactly like a missing resource (404, the same body but for the id).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newAction } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import { adminClient, bearer, createKey, http, json, layer as testServer, serverSuite } from "./TestServer.ts"

const allScopes = ["chat", "agents", "files", "actions", "analytics"] as const

/** Two spaces with an agent each; a file, a chat and an action in the other space; a key bound to the first. */
const world = Effect.gen(function*() {
  const admin = yield* adminClient
  const space = (label: string) =>
    admin.api.admin.createSpace({ payload: { code: `${label}-${crypto.randomUUID().slice(0, 8)}`, name: label } })
  const mine = yield* space("mine")
  const other = yield* space("other")
  const agent = (spaceId: string) =>
    admin.api.agentsAdmin.create({
      payload: { space_id: spaceId, name: "Helper", summary: "Helps with orders", is_primary: true }
    })
  const myAgent = yield* agent(mine.id)
  const otherAgent = yield* agent(other.id)
  const target = yield* localServer(() => jsonAnswer(200, { ok: true }))
  const action = yield* newAction({ url: `${target.url}/thing` })
  yield* admin.api.agentsAdmin.assignActions({ params: { id: otherAgent.id }, payload: { action_ids: [action.id] } })
  const unbound = yield* createKey(allScopes, { rate_limit_rpm: 10_000 })
  const otherFile = yield* http(
    "/v1/knowledge/ingest",
    json(
      "POST",
      { agent_id: otherAgent.id, filename: "other.txt", content: "Refunds take five days." },
      bearer(unbound.key)
    )
  )
  const otherChat = yield* http(
    "/v1/chat/completions",
    json("POST", { message: "hello", space: other.id }, bearer(unbound.key))
  )
  const bound = yield* createKey(allScopes, { space_id: mine.id, rate_limit_rpm: 10_000 })
  return {
    mine,
    other,
    myAgent,
    otherAgent,
    action,
    target,
    unbound: unbound.key,
    key: bound.key,
    otherFileId: otherFile.body.file_id as string,
    otherChatId: otherChat.headers.get("x-chat-id")!
  }
}).pipe(Effect.orDie)

/** The body with the given ids replaced, to compare an outside resource's 404 with a missing one's. */
const anonymized = (body: unknown, ...ids: ReadonlyArray<string>) => {
  let text = JSON.stringify(body)
  for (const id of ids) text = text.replaceAll(id, "<id>")
  return JSON.parse(text)
}

const expectSameAsMissing = (
  outside: { readonly status: number; readonly body: unknown },
  missing: { readonly status: number; readonly body: unknown },
  outsideId: string,
  missingId: string
) => {
  assert.strictEqual(outside.status, 404)
  assert.strictEqual(missing.status, 404)
  assert.deepStrictEqual(anonymized(outside.body, outsideId), anonymized(missing.body, missingId))
}

const rpc = (key: string, body: unknown) =>
  http("/mcp", json("POST", body, { accept: "application/json, text/event-stream", authorization: `Bearer ${key}` }))

layer(testServer(), serverSuite)("a space-bound key", (it) => {
  describe("GET /v1/agents", () => {
    it.effect("lists its space's agents only, and another space by name lists nothing, like an unknown one", () =>
      Effect.gen(function*() {
        const w = yield* world
        const all = yield* http("/v1/agents", { headers: bearer(w.key) })
        assert.deepStrictEqual(all.body.agents.map((a: { id: string }) => a.id), [w.myAgent.id])
        const other = yield* http(`/v1/agents?space=${w.other.code}`, { headers: bearer(w.key) })
        assert.deepStrictEqual(other.body, { agents: [] })
        const unknown = yield* http("/v1/agents?space=no-such-space", { headers: bearer(w.key) })
        assert.deepStrictEqual(unknown.body, other.body)
      }))
  })

  describe("GET /v1/agents/{id}", () => {
    it.effect("answers another space's agent as a missing one", () =>
      Effect.gen(function*() {
        const w = yield* world
        const missingId = crypto.randomUUID()
        expectSameAsMissing(
          yield* http(`/v1/agents/${w.otherAgent.id}`, { headers: bearer(w.key) }),
          yield* http(`/v1/agents/${missingId}`, { headers: bearer(w.key) }),
          w.otherAgent.id,
          missingId
        )
        assert.strictEqual((yield* http(`/v1/agents/${w.myAgent.id}`, { headers: bearer(w.key) })).status, 200)
      }))
  })

  describe("GET /v1/knowledge", () => {
    it.effect("never shows another space's files, also when asked by agent_id", () =>
      Effect.gen(function*() {
        const w = yield* world
        const all = yield* http("/v1/knowledge", { headers: bearer(w.key) })
        assert.isFalse(all.body.files.some((f: { id: string }) => f.id === w.otherFileId))
        const byAgent = yield* http(`/v1/knowledge?agent_id=${w.otherAgent.id}`, { headers: bearer(w.key) })
        const unknown = yield* http(`/v1/knowledge?agent_id=${crypto.randomUUID()}`, { headers: bearer(w.key) })
        assert.deepStrictEqual(byAgent.body, { files: [] })
        assert.deepStrictEqual(byAgent.body, unknown.body)
        const unboundSees = yield* http(`/v1/knowledge?agent_id=${w.otherAgent.id}`, { headers: bearer(w.unbound) })
        assert.deepStrictEqual(unboundSees.body.files.map((f: { id: string }) => f.id), [w.otherFileId])
      }))

    it.effect("shows its own space's files, listed whole and by agent_id", () =>
      Effect.gen(function*() {
        const w = yield* world
        const upload = { agent_id: w.myAgent.id, filename: "mine.txt", content: "Parcels leave daily." }
        const mine = yield* http("/v1/knowledge/ingest", json("POST", upload, bearer(w.key)))
        assert.strictEqual(mine.status, 201)
        const ids = (body: { files: ReadonlyArray<{ id: string }> }) => body.files.map((f) => f.id)
        assert.include(ids((yield* http("/v1/knowledge", { headers: bearer(w.key) })).body), mine.body.file_id)
        assert.deepStrictEqual(
          ids((yield* http(`/v1/knowledge?agent_id=${w.myAgent.id}`, { headers: bearer(w.key) })).body),
          [mine.body.file_id]
        )
      }))
  })

  describe("POST /v1/knowledge/ingest", () => {
    it.effect("cannot plant a document on another space's agent: 404 as for a missing agent, nothing stored", () =>
      Effect.gen(function*() {
        const w = yield* world
        const missingId = crypto.randomUUID()
        const body = (agentId: string) => ({ agent_id: agentId, filename: "planted.txt", content: "planted" })
        expectSameAsMissing(
          yield* http("/v1/knowledge/ingest", json("POST", body(w.otherAgent.id), bearer(w.key))),
          yield* http("/v1/knowledge/ingest", json("POST", body(missingId), bearer(w.key))),
          w.otherAgent.id,
          missingId
        )
        const files = yield* http(`/v1/knowledge?agent_id=${w.otherAgent.id}`, { headers: bearer(w.unbound) })
        assert.deepStrictEqual(files.body.files.map((f: { filename: string }) => f.filename), ["other.txt"])
        assert.strictEqual(
          (yield* http("/v1/knowledge/ingest", json("POST", body(w.myAgent.id), bearer(w.key)))).status,
          201
        )
      }))
  })

  describe("DELETE /v1/knowledge/{id}", () => {
    it.effect("cannot delete another space's file: 404 as for a missing file, the file stays", () =>
      Effect.gen(function*() {
        const w = yield* world
        const missingId = crypto.randomUUID()
        expectSameAsMissing(
          yield* http(`/v1/knowledge/${w.otherFileId}`, { method: "DELETE", headers: bearer(w.key) }),
          yield* http(`/v1/knowledge/${missingId}`, { method: "DELETE", headers: bearer(w.key) }),
          w.otherFileId,
          missingId
        )
        const files = yield* http(`/v1/knowledge?agent_id=${w.otherAgent.id}`, { headers: bearer(w.unbound) })
        assert.deepStrictEqual(files.body.files.map((f: { id: string }) => f.id), [w.otherFileId])
      }))

    it.effect("deletes its own space's file", () =>
      Effect.gen(function*() {
        const w = yield* world
        const upload = { agent_id: w.myAgent.id, filename: "mine.txt", content: "Parcels leave daily." }
        const mine = yield* http("/v1/knowledge/ingest", json("POST", upload, bearer(w.key)))
        const deleted = yield* http(`/v1/knowledge/${mine.body.file_id}`, { method: "DELETE", headers: bearer(w.key) })
        assert.strictEqual(deleted.status, 200)
        assert.deepStrictEqual(
          (yield* http(`/v1/knowledge?agent_id=${w.myAgent.id}`, { headers: bearer(w.key) })).body,
          { files: [] }
        )
      }))
  })

  describe("GET /v1/usage", () => {
    it.effect("reports its own space only; its direct executions count in its space's row, which is its total", () =>
      Effect.gen(function*() {
        const w = yield* world
        const admin = yield* adminClient
        yield* admin.api.agentsAdmin.assignActions({
          params: { id: w.myAgent.id },
          payload: { action_ids: [w.action.id] }
        })
        const run = yield* http(`/v1/actions/${w.action.id}/execute`, json("POST", { params: {} }, bearer(w.key)))
        assert.strictEqual(run.status, 200)
        const usage = yield* http("/v1/usage?period=24h", { headers: bearer(w.key) })
        assert.strictEqual(usage.status, 200)
        assert.deepStrictEqual(usage.body.by_space.map((s: { space_id: string }) => s.space_id), [w.mine.id])
        assert.strictEqual(usage.body.messages, 0)
        assert.strictEqual(usage.body.successful_action_executions, 1)
        assert.strictEqual(usage.body.by_space[0].successful_action_executions, 1)
        const tenant = yield* http("/v1/usage?period=24h", { headers: bearer(w.unbound) })
        assert.isAbove(tenant.body.messages, 0)
        const mineRow = tenant.body.by_space.find((s: { space_id: string }) => s.space_id === w.mine.id)
        assert.strictEqual(mineRow.successful_action_executions, 1)
      }))
  })

  describe("POST /v1/chat/completions", () => {
    it.effect("cannot chat in another space, by space or by chat_id: 404 as for a missing one", () =>
      Effect.gen(function*() {
        const w = yield* world
        expectSameAsMissing(
          yield* http("/v1/chat/completions", json("POST", { message: "hi", space: w.other.code }, bearer(w.key))),
          yield* http("/v1/chat/completions", json("POST", { message: "hi", space: "no-such-space" }, bearer(w.key))),
          w.other.code,
          "no-such-space"
        )
        const missingChat = crypto.randomUUID()
        expectSameAsMissing(
          yield* http("/v1/chat/completions", json("POST", { message: "hi", chat_id: w.otherChatId }, bearer(w.key))),
          yield* http("/v1/chat/completions", json("POST", { message: "hi", chat_id: missingChat }, bearer(w.key))),
          w.otherChatId,
          missingChat
        )
      }))
  })

  describe("GET /v1/chat/history/{chatId}", () => {
    it.effect("answers another space's chat as a missing one", () =>
      Effect.gen(function*() {
        const w = yield* world
        const missingChat = crypto.randomUUID()
        expectSameAsMissing(
          yield* http(`/v1/chat/history/${w.otherChatId}`, { headers: bearer(w.key) }),
          yield* http(`/v1/chat/history/${missingChat}`, { headers: bearer(w.key) }),
          w.otherChatId,
          missingChat
        )
        assert.strictEqual(
          (yield* http(`/v1/chat/history/${w.otherChatId}`, { headers: bearer(w.unbound) })).status,
          200
        )
      }))
  })

  describe("POST /v1/actions/{id}/execute", () => {
    it.effect("cannot run another space's action: 404 as for a missing one, and nothing is called", () =>
      Effect.gen(function*() {
        const w = yield* world
        const calls = w.target.received.length
        const missingId = crypto.randomUUID()
        expectSameAsMissing(
          yield* http(`/v1/actions/${w.action.id}/execute`, json("POST", { params: {} }, bearer(w.key))),
          yield* http(`/v1/actions/${missingId}/execute`, json("POST", { params: {} }, bearer(w.key))),
          w.action.id,
          missingId
        )
        assert.strictEqual(w.target.received.length, calls)
      }))
  })

  describe("/mcp", () => {
    it.effect("lists no tool of another space, and calling one is the same error as an unknown tool", () =>
      Effect.gen(function*() {
        const w = yield* world
        const listed = yield* rpc(w.key, { jsonrpc: "2.0", id: 1, method: "tools/list" })
        assert.deepStrictEqual(listed.body.result.tools, [])
        const missingId = crypto.randomUUID()
        const outside = yield* rpc(w.key, {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: w.action.id, arguments: {} }
        })
        const missing = yield* rpc(w.key, {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: missingId, arguments: {} }
        })
        assert.strictEqual(outside.status, missing.status)
        assert.deepStrictEqual(anonymized(outside.body, w.action.id), anonymized(missing.body, missingId))
      }))
  })
})
