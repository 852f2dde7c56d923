/**
 * The action catalog as MCP tools at `/mcp` (issue #4, spec "Limits": the
 * execute limit "also applies to the equivalent MCP tool"): effect's own MCP
 * client (protocol 2025-11-25) and raw JSON-RPC over fetch (2025-03-26)
 * against the test server and a local HTTP target.
 */
import type { Actions } from "@agent-platform/domain"
import type * as Sdk from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as McpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as SqlClient from "effect/sql/SqlClient"
import { newAction, param, spaceWith } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import { createKey, http, json, layer as testServer, secondTenant, serverSuite, TestServer } from "./TestServer.ts"

/** An action as an MCP tool's source: its description names MCP. */
const newTool = (
  fields: {
    readonly name: string
    readonly url: string
    readonly parameters?: ReadonlyArray<Actions.ActionParameter>
    readonly is_active?: boolean
  },
  as?: Sdk.Connected
) => newAction({ ...fields, description: `${fields.name} for MCP` }, as)

/** effect's MCP client over Streamable HTTP, authenticated with `key`. */
const mcpClient = (key: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const transport = yield* McpClient.http({
      url: `${server.baseUrl}/mcp`,
      protocol: McpProtocol.v2025_11_25,
      headers: { authorization: `Bearer ${key}` }
    })
    return yield* McpClient.make({ name: "platform-tests", version: "1.0.0" }).pipe(
      Effect.provideService(McpClient.Transport, transport)
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** One raw JSON-RPC POST to /mcp (protocol 2025-03-26 unless a header says otherwise). */
const rpc = (key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  http(
    "/mcp",
    json("POST", body, {
      accept: "application/json, text/event-stream",
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...headers
    })
  )

const call = (id: number, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params })
})

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text: string }).text

layer(testServer(), serverSuite)("MCP at /mcp", (it) => {
  describe("with effect's McpClient (2025-11-25)", () => {
    it.effect("initializes, lists one tool per active action with its parameters as input schema, and calls one", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, { weather: "sunny" }))
        const action = yield* newTool({
          name: "Get weather",
          url: `${target.url}/weather/{city}`,
          parameters: [param("city", "string", true), param("days", "integer", false)]
        })
        const inactive = yield* newTool({ name: "Retired", url: target.url, is_active: false })
        const { id: keyId, key } = yield* createKey(["actions:execute"])
        const client = yield* mcpClient(key)
        assert.strictEqual(client.protocolVersion, "2025-11-25")
        assert.strictEqual(client.serverInfo?.name, "agent-platform-actions")

        const tools = yield* client.listTools()
        const tool = tools.find((t) => t.name === "Get_weather")!
        assert.isDefined(tool)
        assert.strictEqual(tool.description, "Get weather for MCP")
        assert.deepStrictEqual(tool.inputSchema, {
          type: "object",
          properties: {
            city: { type: "string", description: "the city" },
            days: { type: "integer", description: "the days" }
          },
          required: ["city"],
          additionalProperties: false
        })
        assert.isFalse(tools.some((t) => t.name === "Retired"))
        void inactive

        const result = yield* client.callTool({ tool, arguments: { city: "Lisbon", days: 2 } })
        assert.isFalse(result.isError ?? false)
        assert.deepStrictEqual(JSON.parse(textOf(result)), {
          success: true,
          status_code: 200,
          action_id: action.id,
          action_name: "Get weather",
          response: { weather: "sunny" },
          error: null
        })
        assert.deepStrictEqual(result.structuredContent, JSON.parse(textOf(result)))
        assert.strictEqual(target.received[0].url, "/weather/Lisbon?days=2")
        // Recorded like a direct execution by the key, on the MCP channel.
        const sql = yield* SqlClient.SqlClient
        const [execution] = yield* sql<
          { caller_id: string; supervision: string; channel: string; trigger_type: string; trigger_id: string }
        >`
          SELECT caller_id, supervision, channel, trigger_type, trigger_id FROM action_executions WHERE action_id = ${action.id}`
        assert.deepStrictEqual({ ...execution }, {
          caller_id: keyId,
          supervision: "autonomous",
          channel: "mcp",
          trigger_type: "key",
          trigger_id: keyId
        })
      }))

    it.effect("a remote failure is a tool result with isError and the ActionResponse; invalid arguments are a tool error too", () =>
      Effect.gen(function*() {
        const failing = yield* localServer(() => ({ status: 500, body: "boom" }))
        yield* newTool({ name: "Flaky call", url: failing.url, parameters: [param("id", "integer", true)] })
        const { key } = yield* createKey(["actions"])
        const client = yield* mcpClient(key)
        const tool = (yield* client.listTools()).find((t) => t.name === "Flaky_call")!
        const failed = yield* client.callTool({ tool, arguments: { id: 1 } })
        assert.isTrue(failed.isError)
        assert.deepInclude(JSON.parse(textOf(failed)), {
          success: false,
          status_code: 500,
          response: "the remote system answered HTTP 500: boom"
        })
        const invalid = yield* client.callTool({ tool, arguments: { id: "one" } })
        assert.isTrue(invalid.isError)
        assert.match(textOf(invalid), /parameter `id` must be an integer, got string/)
        assert.strictEqual(failing.received.length, 1)
      }))
  })

  describe("raw JSON-RPC (2025-03-26)", () => {
    it.effect("initialize, notifications/initialized (202), ping, tools/list, tools/call and a batch", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, { pong: true }))
        const action = yield* newTool({
          name: "Ping target",
          url: target.url,
          parameters: [param("msg", "string", true)]
        })
        const { key } = yield* createKey(["actions"])
        const init = yield* rpc(
          key,
          call(1, "initialize", {
            protocolVersion: "2025-03-26",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" }
          })
        )
        assert.strictEqual(init.status, 200)
        assert.match(init.headers.get("content-type")!, /application\/json/)
        assert.deepInclude(init.body, { jsonrpc: "2.0", id: 1 })
        assert.strictEqual(init.body.result.protocolVersion, "2025-03-26")
        assert.deepStrictEqual(init.body.result.capabilities, { tools: { listChanged: false } })
        assert.isNull(init.headers.get("mcp-session-id"))
        const initialized = yield* rpc(key, { jsonrpc: "2.0", method: "notifications/initialized" })
        assert.strictEqual(initialized.status, 202)
        assert.strictEqual(initialized.body, "")
        assert.deepStrictEqual((yield* rpc(key, call(2, "ping"))).body, { jsonrpc: "2.0", id: 2, result: {} })
        const list = yield* rpc(key, call(3, "tools/list"))
        const tool = list.body.result.tools.find((t: { name: string }) => t.name === "Ping_target")
        assert.deepStrictEqual(tool.inputSchema.required, ["msg"])
        const result = yield* rpc(key, call(4, "tools/call", { name: "Ping_target", arguments: { msg: "hi" } }))
        assert.strictEqual(result.body.result.isError, false)
        assert.isUndefined(result.body.result.structuredContent)
        assert.deepInclude(JSON.parse(result.body.result.content[0].text), {
          success: true,
          action_id: action.id,
          response: { pong: true }
        })
        // By action id too.
        const byId = yield* rpc(key, call(5, "tools/call", { name: action.id, arguments: { msg: "again" } }))
        assert.strictEqual(byId.body.result.isError, false)
        const batch = yield* rpc(key, [call(6, "ping"), {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 1 }
        }, call(7, "nope")])
        assert.strictEqual(batch.status, 200)
        assert.deepStrictEqual(batch.body, [
          { jsonrpc: "2.0", id: 6, result: {} },
          { jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: nope" } }
        ])
      }))

    it.effect("protocol errors: invalid arguments name the parameters (-32602), bad JSON is a parse error (400), bad messages are invalid requests", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        yield* newTool({
          name: "Strict",
          url: target.url,
          parameters: [param("a", "string", true), param("b", "boolean", true)]
        })
        const { key } = yield* createKey(["actions"])
        const invalid = yield* rpc(key, call(1, "tools/call", { name: "Strict", arguments: { b: "no" } }))
        assert.strictEqual(invalid.body.error.code, -32602)
        assert.include(invalid.body.error.message, "missing required parameter `a`")
        assert.include(invalid.body.error.message, "parameter `b` must be a boolean")
        const noName = yield* rpc(key, call(2, "tools/call", { arguments: {} }))
        assert.strictEqual(noName.body.error.code, -32602)
        const parse = yield* rpc(key, "{nope")
        assert.strictEqual(parse.status, 400)
        assert.deepStrictEqual(parse.body.error.code, -32700)
        // JSON can spell a lone UTF-16 surrogate; no tool argument may carry one (a pair is fine).
        const lone = yield* rpc(
          key,
          JSON.stringify(call(5, "tools/call", { name: "Strict", arguments: { a: "PH", b: true } })).replace(
            "PH",
            "x\\udc00"
          )
        )
        assert.strictEqual(lone.status, 400)
        assert.strictEqual(lone.body.error.code, -32700)
        assert.match(lone.body.error.message, /valid Unicode/)
        const pair = yield* rpc(key, `{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"ping"}`)
        assert.strictEqual(pair.status, 200)
        assert.deepStrictEqual(pair.body, { jsonrpc: "2.0", id: "\u{1F600}", result: {} })
        // Bytes that are not UTF-8 (a Latin-1 "é") are a parse error; U+FFFD sent as UTF-8 is a character.
        const raw = (id: Buffer) =>
          http("/mcp", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              authorization: `Bearer ${key}`
            },
            body: Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":"`), id, Buffer.from(`","method":"ping"}`)])
          })
        const latin1 = yield* raw(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
        assert.strictEqual(latin1.status, 400)
        assert.strictEqual(latin1.body.error.code, -32700)
        assert.match(latin1.body.error.message, /UTF-8/)
        const replacement = yield* raw(Buffer.from("caf\uFFFD", "utf8"))
        assert.deepStrictEqual(replacement.body, { jsonrpc: "2.0", id: "caf\uFFFD", result: {} })
        const notRpc = yield* rpc(key, { hello: "world" })
        assert.strictEqual(notRpc.status, 400)
        assert.strictEqual(notRpc.body.error.code, -32600)
        // An id that is neither a string nor an integer: an invalid request, answered (not dropped as a notification).
        for (const id of [{ a: 1 }, true, null, 1.5]) {
          const badId = yield* rpc(key, { jsonrpc: "2.0", id, method: "tools/list" })
          assert.strictEqual(badId.status, 400, JSON.stringify(id))
          assert.deepStrictEqual(badId.body.error.code, -32600)
          assert.isNull(badId.body.id)
        }
        const emptyBatch = yield* rpc(key, [])
        assert.strictEqual(emptyBatch.status, 400)
        const version = yield* rpc(key, call(3, "ping"), { "mcp-protocol-version": "1999-01-01" })
        assert.strictEqual(version.status, 400)
        const get = yield* http("/mcp", { headers: { authorization: `Bearer ${key}` } })
        assert.strictEqual(get.status, 405)
        assert.strictEqual(get.headers.get("allow"), "POST")
        const origin = yield* rpc(key, call(4, "ping"), { origin: "https://evil.example" })
        assert.strictEqual(origin.status, 403)
        assert.strictEqual(target.received.length, 0)
      }))
  })

  describe("authentication", () => {
    it.effect("401 without or with an invalid key; 403 without actions or actions:execute", () =>
      Effect.gen(function*() {
        const none = yield* rpc(undefined, call(1, "tools/list"))
        assert.strictEqual(none.status, 401)
        assert.strictEqual(none.headers.get("www-authenticate"), "Bearer")
        assert.deepInclude(none.body, { jsonrpc: "2.0", id: null })
        const invalid = yield* rpc(`sk_live_${"0".repeat(64)}`, call(1, "tools/list"))
        assert.strictEqual(invalid.status, 401)
        for (const scopes of [["agents"], ["actions:read"]] as const) {
          const { key } = yield* createKey(scopes)
          const refused = yield* rpc(key, call(1, "tools/list"))
          assert.strictEqual(refused.status, 403, scopes.join())
          assert.match(refused.body.error.message, /`actions` or `actions:execute`/)
        }
        const { key } = yield* createKey(["actions:execute"])
        assert.strictEqual((yield* rpc(key, call(1, "tools/list"))).status, 200)
      }))
  })

  describe("the execute rules", () => {
    it.effect("a space-bound key sees only its space's tools; outside and nonexistent tools are the same unknown tool", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        const inside = yield* newTool({ name: "Inside tool", url: `${target.url}/inside` })
        const outside = yield* newTool({ name: "Outside tool", url: `${target.url}/outside` })
        const space = yield* spaceWith([inside.id])
        const { key } = yield* createKey(["actions"], { space_id: space.id })
        const list = yield* rpc(key, call(1, "tools/list"))
        assert.deepStrictEqual(list.body.result.tools.map((t: { name: string }) => t.name), ["Inside_tool"])
        const outsideById = yield* rpc(key, call(2, "tools/call", { name: outside.id, arguments: {} }))
        const outsideByName = yield* rpc(key, call(3, "tools/call", { name: "Outside_tool", arguments: {} }))
        const missing = yield* rpc(key, call(4, "tools/call", { name: crypto.randomUUID(), arguments: {} }))
        assert.strictEqual(outsideById.body.error.code, -32602)
        assert.strictEqual(outsideById.body.error.message, `Unknown tool: ${outside.id}`)
        assert.strictEqual(outsideByName.body.error.message, "Unknown tool: Outside_tool")
        assert.strictEqual(missing.body.error.code, -32602)
        assert.deepStrictEqual(target.received, [])
        const ran = yield* rpc(key, call(5, "tools/call", { name: "Inside_tool", arguments: {} }))
        assert.strictEqual(ran.body.result.isError, false)
      }))

    it.effect("an unbound key calling a nonexistent tool gets the JSON-RPC error -32602, and nothing runs", () =>
      Effect.gen(function*() {
        const { id: keyId, key } = yield* createKey(["actions"])
        const result = yield* rpc(key, call(1, "tools/call", { name: "does_not_exist", arguments: {} }))
        assert.strictEqual(result.status, 200)
        assert.deepStrictEqual(result.body, {
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32602, message: "Unknown tool: does_not_exist" }
        })
        const sql = yield* SqlClient.SqlClient
        const executions = yield* sql`SELECT 1 FROM action_executions WHERE caller_id = ${keyId}`
        assert.strictEqual(executions.length, 0)
      }))

    it.effect("tools of another tenant are neither listed nor callable", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        const other = yield* secondTenant()
        const theirs = yield* newTool({ name: "Their secret tool", url: target.url }, other.client)
        const { key } = yield* createKey(["actions"])
        const list = yield* rpc(key, call(1, "tools/list"))
        assert.isFalse(list.body.result.tools.some((t: { name: string }) => t.name === "Their_secret_tool"))
        const result = yield* rpc(key, call(2, "tools/call", { name: theirs.id, arguments: {} }))
        assert.deepStrictEqual(result.body.error, { code: -32602, message: `Unknown tool: ${theirs.id}` })
        assert.strictEqual(target.received.length, 0)
      }))

    it.effect("actions with the same name get distinct tool names carrying their id", () =>
      Effect.gen(function*() {
        const target = yield* localServer(() => jsonAnswer(200, {}))
        const a = yield* newTool({ name: "Twin action", url: `${target.url}/a` })
        const b = yield* newTool({ name: "Twin action", url: `${target.url}/b` })
        const { key } = yield* createKey(["actions"])
        const list = yield* rpc(key, call(1, "tools/list"))
        const names = list.body.result.tools.map((t: { name: string }) => t.name).filter((n: string) =>
          n.startsWith("Twin_action")
        )
        assert.sameMembers(names, [`Twin_action_${a.id.slice(0, 8)}`, `Twin_action_${b.id.slice(0, 8)}`])
        yield* rpc(key, call(2, "tools/call", { name: `Twin_action_${b.id.slice(0, 8)}`, arguments: {} }))
        assert.deepStrictEqual(target.received.map((r) => r.url), ["/b"])
      }))

    it.effect("tools/call shares the 60/min execute limit with POST /v1/actions/{id}/execute (429); listing does not", () =>
      Effect.gen(function*() {
        const { key } = yield* createKey(["actions"], { rate_limit_rpm: 1000 })
        const missing = crypto.randomUUID()
        for (let i = 0; i < 60; i++) {
          const response = yield* http(
            `/v1/actions/${missing}/execute`,
            json("POST", {}, { authorization: `Bearer ${key}` })
          )
          assert.strictEqual(response.status, 502)
        }
        const limited = yield* rpc(key, call(1, "tools/call", { name: "anything", arguments: {} }))
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.body.error.code, -32029)
        assert.strictEqual(limited.headers.get("x-ratelimit-limit"), "60")
        assert.isNotNull(limited.headers.get("retry-after"))
        const list = yield* rpc(key, call(2, "tools/list"))
        assert.strictEqual(list.status, 200)
        // And the other way round: the key's next execute is refused too.
        const execute = yield* http(
          `/v1/actions/${missing}/execute`,
          json("POST", {}, { authorization: `Bearer ${key}` })
        )
        assert.strictEqual(execute.status, 429)
      }))
  })
})
