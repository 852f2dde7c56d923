/**
 * Direct execution of catalog actions (spec: `POST /v1/actions/{id}/execute`,
 * rules 3–6, and the outbound safety of issue #4), against real local HTTP
 * servers and the test database.
 */
import type { Actions } from "@agent-platform/domain"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ActionRunner, type Caller, type ExecuteInput } from "../src/Actions/ActionRunner.ts"
import { OutboundGuard, refusalReason, refusedLookupCode } from "../src/Actions/OutboundGuard.ts"
import { AuditLog } from "../src/Audit/AuditLog.ts"
import { canonicalJson } from "../src/Audit/CanonicalJson.ts"
import { ServerConfig } from "../src/Platform/Config.ts"
import { Encryption } from "../src/Platform/Encryption.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import { layer as testServer, serverSuite } from "./TestServer.ts"

// ---------------------------------------------------------------------------
// Local HTTP targets (see LocalHttp.ts)

/** A port nothing listens on. */
const closedPort = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

// ---------------------------------------------------------------------------
// Catalog rows

const tenantId = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [tenant] = yield* sql<{ id: string }>`SELECT id FROM tenants ORDER BY created_at LIMIT 1`
  return tenant.id
}).pipe(Effect.orDie)

const createSpace = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const code = `space-${crypto.randomUUID().slice(0, 8)}`
  const [row] = yield* sql<{ id: string }>`
    INSERT INTO spaces (tenant_id, code, name) VALUES (${yield* tenantId}, ${code}, ${code}) RETURNING id`
  return row.id
})

const createAgent = (spaceId: string, actionIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [agent] = yield* sql<{ id: string }>`
      INSERT INTO agents (tenant_id, space_id, name) VALUES (${yield* tenantId}, ${spaceId}, 'Agent') RETURNING id`
    for (
      const actionId of actionIds
    ) yield* sql`INSERT INTO agent_actions (agent_id, action_id) VALUES (${agent.id}, ${actionId})`
    return agent.id
  })

interface ActionSpec {
  readonly url: string
  readonly method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly parameters?: ReadonlyArray<Actions.ActionParameter>
  readonly headers?: Record<string, string>
  readonly isActive?: boolean
  /** Default: the bootstrap tenant. */
  readonly tenantId?: string
}

const createAction = (spec: ActionSpec) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = `action-${crypto.randomUUID().slice(0, 8)}`
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO actions (tenant_id, name, http_method, url, headers, parameters, is_active)
      VALUES (${spec.tenantId ?? (yield* tenantId)}, ${name}, ${spec.method ?? "GET"}, ${spec.url},
              ${JSON.stringify(spec.headers ?? {})}::jsonb, ${JSON.stringify(spec.parameters ?? [])}::jsonb, ${
      spec.isActive ?? true
    })
      RETURNING id`
    return { id: row.id, name }
  })

const putSecret = (name: string, value: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const encryption = yield* Encryption
    yield* sql`
      INSERT INTO tenant_secrets (tenant_id, name, ciphertext) VALUES (${yield* tenantId}, ${name}, ${
      encryption.encrypt(value)
    })
      ON CONFLICT (tenant_id, name) DO UPDATE SET ciphertext = EXCLUDED.ciphertext`
  })

const param = (name: string, type: Actions.ParameterType, required: boolean): Actions.ActionParameter => ({
  name,
  type,
  description: name,
  required
})

const unboundKey: Caller = { kind: "key", keyId: crypto.randomUUID(), spaceId: null }

const execute = (
  actionId: string,
  params: Record<string, unknown> = {},
  caller: Caller = unboundKey,
  extra: Partial<ExecuteInput> = {}
) =>
  Effect.gen(function*() {
    const runner = yield* ActionRunner
    const trigger: ExecuteInput["trigger"] = caller.kind === "key"
      ? { type: "key", keyId: caller.keyId, channel: "direct" }
      : { type: "user", userId: caller.userId, channel: "direct" }
    return yield* runner.execute({ tenantId: yield* tenantId, caller, actionId, params, trigger, ...extra })
  })

/** The failure of an execution that must fail. */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

// ---------------------------------------------------------------------------
// Layers: the services under test, configured like the test server they run on

const servicesFor = (env: Record<string, string>) =>
  Layer.provideMerge(
    ActionRunner.layer.pipe(
      Layer.provideMerge(OutboundGuard.layer),
      Layer.provideMerge(ServerConfig.layer),
      Layer.provide(
        ConfigProvider.layer(ConfigProvider.fromUnknown({ ACTIONS_ALLOW_PRIVATE_NETWORKS: "true", ...env }))
      )
    ),
    testServer(env)
  )

// ROLE api: the delivery worker stays off, so queued deliveries stay as the execution left them.
const env = { ROLE: "api", ACTIONS_TIMEOUT_MS: "1000", ACTIONS_MAX_RESPONSE_BYTES: "4096" }

layer(servicesFor(env), serverSuite)("ActionRunner.execute", (it) => {
  describe("spec rules 3–4: which actions a caller may run", () => {
    it.effect("a space-bound key gets the same 404 for an action outside its space and for a missing one", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, { ok: true }))
        const inside = yield* createAction({ url: `${remote.url}/inside` })
        const outside = yield* createAction({ url: `${remote.url}/outside` })
        const space = yield* createSpace
        const otherSpace = yield* createSpace
        yield* createAgent(space, [inside.id])
        yield* createAgent(otherSpace, [outside.id])
        const key: Caller = { kind: "key", keyId: crypto.randomUUID(), spaceId: space }

        const ran = yield* execute(inside.id, {}, key)
        assert.strictEqual(ran.success, true)

        const outsideError = yield* failureOf(execute(outside.id, {}, key))
        const missingError = yield* failureOf(execute(crypto.randomUUID(), {}, key))
        const malformedError = yield* failureOf(execute("not-an-id", {}, key))
        const body = (error: typeof outsideError) => ({ tag: error._tag, error: error.error })
        assert.deepStrictEqual(body(outsideError), { tag: "NotFound", error: "action not found" })
        assert.deepStrictEqual(body(missingError), body(outsideError))
        assert.deepStrictEqual(body(malformedError), body(outsideError))
        assert.deepStrictEqual(remote.received.map((r) => r.url), ["/inside"])
      }))

    it.effect("an unbound key may run any action of the tenant, and gets a 502 ActionFailed for a missing or inactive one", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, { ok: true }))
        const unassigned = yield* createAction({ url: remote.url })
        const inactive = yield* createAction({ url: remote.url, isActive: false })
        assert.strictEqual((yield* execute(unassigned.id)).success, true)

        const missingId = crypto.randomUUID()
        const missing = yield* failureOf(execute(missingId))
        assert.strictEqual(missing._tag, "ActionFailed")
        if (missing._tag !== "ActionFailed") return
        assert.strictEqual(missing.success, false)
        assert.strictEqual(missing.status_code, 502)
        assert.strictEqual(missing.action_id, missingId)
        assert.isString(missing.response)
        const gone = yield* failureOf(execute(inactive.id))
        assert.strictEqual(gone._tag, "ActionFailed")
        assert.strictEqual(remote.received.length, 1)
      }))
  })

  describe("spec rule 5: the remote call", () => {
    it.effect("a 2xx answers with the parsed JSON response and the remote's status", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(201, { order: { id: 42, state: "created" } }))
        const action = yield* createAction({ url: `${remote.url}/orders` })
        const response = yield* execute(action.id)
        assert.deepStrictEqual(response, {
          success: true,
          status_code: 201,
          action_id: action.id,
          action_name: action.name,
          response: { order: { id: 42, state: "created" } },
          error: null
        })
      }))

    it.effect("a text answer comes back as text", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => ({
          status: 200,
          body: "pong",
          headers: { "content-type": "text/plain" }
        }))
        const action = yield* createAction({ url: remote.url })
        assert.strictEqual((yield* execute(action.id)).response, "pong")
      }))

    it.effect("a remote 500 is a 502 ActionFailed with the remote's status and a string response", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(500, { message: "database down" }))
        const action = yield* createAction({ url: remote.url })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.strictEqual(failure.success, false)
        assert.strictEqual(failure.status_code, 500)
        assert.strictEqual(failure.action_id, action.id)
        assert.strictEqual(failure.action_name, action.name)
        assert.isString(failure.response)
        assert.include(failure.response as string, "HTTP 500")
        assert.include(failure.response as string, "database down")
        assert.isString(failure.error)
      }))

    it.effect("a remote that does not answer within ACTIONS_TIMEOUT_MS is a failure with status_code 504", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => "hang")
        const action = yield* createAction({ url: remote.url })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.strictEqual(failure.status_code, 504)
        assert.include(failure.response as string, "did not answer within 1000 ms")
        assert.strictEqual(remote.received.length, 1)
      }))

    it.effect("a refused connection is a failure with status_code 502", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const action = yield* createAction({ url: `http://127.0.0.1:${port}/` })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.strictEqual(failure.status_code, 502)
        assert.include(failure.response as string, "ECONNREFUSED")
      }))

    it.effect("framing headers (Content-Length, Host, ...) are the client's own; the action's other headers are sent", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const framed = yield* createAction({ url: remote.url, headers: { "Content-Length": "999", "X-Kept": "yes" } })
        assert.strictEqual((yield* execute(framed.id)).success, true)
        assert.strictEqual(remote.received[0]?.headers["x-kept"], "yes")
        assert.notStrictEqual(remote.received[0]?.headers["content-length"], "999")
      }))

    it.effect("a response larger than ACTIONS_MAX_RESPONSE_BYTES is cut off and fails", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => ({ status: 200, body: "x".repeat(10_000) }))
        const action = yield* createAction({ url: remote.url })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.include(failure.response as string, "exceeds 4096 bytes")
      }))

    it.effect("a redirect to the same host is followed; one to another host is refused without calling it", () =>
      Effect.gen(function*() {
        const other = yield* localServer(() => jsonAnswer(200, { reached: "other" }))
        const remote = yield* localServer((request) =>
          request.url === "/moved"
            ? { status: 302, headers: { location: "/here" } }
            : request.url === "/away"
            ? { status: 302, headers: { location: `http://localhost:${new URL(other.url).port}/` } }
            : jsonAnswer(200, { reached: request.url })
        )
        const moved = yield* createAction({ url: `${remote.url}/moved` })
        assert.deepStrictEqual((yield* execute(moved.id)).response, { reached: "/here" })
        const away = yield* createAction({ url: `${remote.url}/away` })
        const failure = yield* failureOf(execute(away.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.include(failure.response as string, "another host")
        assert.strictEqual(other.received.length, 0)
      }))

    it.effect("the circuit of a host opens after 5 consecutive failures, then fails fast without calling it", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(503, { message: "overloaded" }))
        const action = yield* createAction({ url: remote.url })
        for (let i = 0; i < 5; i++) {
          const failure = yield* failureOf(execute(action.id))
          assert.strictEqual(failure._tag === "ActionFailed" && failure.status_code, 503)
        }
        assert.strictEqual(remote.received.length, 5)
        const fast = yield* failureOf(execute(action.id))
        assert.strictEqual(fast._tag, "ActionFailed")
        if (fast._tag !== "ActionFailed") return
        assert.strictEqual(fast.success, false)
        assert.include(fast.error ?? "", "circuit open")
        assert.strictEqual(remote.received.length, 5)

        const healthy = yield* localServer(() => jsonAnswer(200, { ok: true }))
        const elsewhere = yield* createAction({ url: healthy.url })
        assert.strictEqual((yield* execute(elsewhere.id)).success, true, "other hosts keep their own circuit")

        // Another tenant's calls to the same host are counted apart: one tenant cannot open another's circuit.
        const sql = yield* SqlClient.SqlClient
        const [other] = yield* sql<{ id: string }>`
          INSERT INTO tenants (name) VALUES (${`circuit-${crypto.randomUUID().slice(0, 8)}`}) RETURNING id`
        const theirs = yield* createAction({ url: remote.url, tenantId: other.id })
        const called = yield* failureOf(execute(theirs.id, {}, unboundKey, { tenantId: other.id }))
        assert.strictEqual(called._tag === "ActionFailed" && called.status_code, 503)
        assert.strictEqual(remote.received.length, 6, "the other tenant's call reached the host")
      }))

    it.effect("a host that answered well, then fails 5 times in a row, has its circuit opened; a success between failures resets the count", () =>
      Effect.gen(function*() {
        // Healthy first (calls to a healthy host skip the breaker's bookkeeping), then failing on demand.
        let failing = false
        const remote = yield* localServer(
          () => (failing ? jsonAnswer(503, { message: "overloaded" }) : jsonAnswer(200, {}))
        )
        const action = yield* createAction({ url: remote.url })
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* execute(action.id)).success, true)
        failing = true
        for (let i = 0; i < 4; i++) yield* failureOf(execute(action.id))
        failing = false
        assert.strictEqual((yield* execute(action.id)).success, true, "a success resets the consecutive failures")
        failing = true
        for (let i = 0; i < 4; i++) yield* failureOf(execute(action.id))
        assert.strictEqual(remote.received.length, 12, "4 failures after a success do not open the circuit")
        yield* failureOf(execute(action.id))
        assert.strictEqual(remote.received.length, 13)
        const fast = yield* failureOf(execute(action.id))
        assert.include(fast._tag === "ActionFailed" ? fast.error ?? "" : "", "circuit open")
        assert.strictEqual(remote.received.length, 13, "an open circuit fails fast without calling")
      }))
  })

  describe("params", () => {
    it.effect("missing required and mistyped parameters are a 400 naming each one, and nothing is called", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({
          url: remote.url,
          parameters: [
            param("city", "string", true),
            param("days", "integer", true),
            param("units", "string", false),
            param("detailed", "boolean", false)
          ]
        })
        const failure = yield* failureOf(execute(action.id, { days: 2.5, detailed: "yes" }))
        assert.strictEqual(failure._tag, "InvalidRequest")
        if (failure._tag !== "InvalidRequest") return
        assert.include(failure.error, "`city`")
        assert.include(failure.error, "`days` must be an integer")
        assert.include(failure.error, "`detailed` must be a boolean")
        assert.notInclude(failure.error, "`units`")
        assert.strictEqual(remote.received.length, 0)
      }))

    it.effect("GET fills URL placeholders (encoded) and sends the other params as the query string", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({
          url: `${remote.url}/orders/{order_id}?source=platform`,
          parameters: [
            param("order_id", "string", true),
            param("status", "string", false),
            param("tags", "array", false)
          ]
        })
        yield* execute(action.id, { order_id: "A/7 b", status: "open", tags: ["x", "y"], not_declared: "dropped" })
        const [request] = remote.received
        assert.strictEqual(request.method, "GET")
        const url = new URL(request.url, remote.url)
        assert.strictEqual(url.pathname, "/orders/A%2F7%20b")
        assert.strictEqual(url.searchParams.get("source"), "platform")
        assert.strictEqual(url.searchParams.get("status"), "open")
        assert.deepStrictEqual(url.searchParams.getAll("tags"), ["x", "y"])
        assert.isFalse(url.searchParams.has("not_declared"))
        assert.isFalse(url.searchParams.has("order_id"))
        assert.strictEqual(request.body, "")
      }))

    it.effect("POST sends the params not used by the URL as a JSON body", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, { created: true }))
        const action = yield* createAction({
          url: `${remote.url}/customers/{id}/notes`,
          method: "POST",
          parameters: [param("id", "integer", true), param("text", "string", true), param("meta", "object", false)]
        })
        yield* execute(action.id, { id: 7, text: "call back", meta: { priority: 1 } })
        const [request] = remote.received
        assert.strictEqual(request.method, "POST")
        assert.strictEqual(request.url, "/customers/7/notes")
        assert.match(request.headers["content-type"] ?? "", /^application\/json/)
        assert.deepStrictEqual(JSON.parse(request.body), { text: "call back", meta: { priority: 1 } })
      }))
  })

  describe("tenant secrets in headers", () => {
    it.effect("a `{{secret:NAME}}` header value is sent decrypted", () =>
      Effect.gen(function*() {
        yield* putSecret("CRM_TOKEN", "s3cr3t-value")
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({
          url: remote.url,
          headers: { Authorization: "Bearer {{secret:CRM_TOKEN}}", "X-Static": "1" }
        })
        yield* execute(action.id)
        assert.strictEqual(remote.received[0].headers.authorization, "Bearer s3cr3t-value")
        assert.strictEqual(remote.received[0].headers["x-static"], "1")
      }))

    it.effect("a reference to a secret that is not set fails clearly without calling", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({
          url: remote.url,
          headers: { Authorization: "Bearer {{secret:NOT_SET_ANYWHERE}}" }
        })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.include(failure.error ?? "", "NOT_SET_ANYWHERE")
        assert.include(failure.error ?? "", "not set")
        assert.strictEqual(remote.received.length, 0)
      }))
  })

  describe("what every execution leaves behind", () => {
    it.effect("an execution row, an audit chain entry and the webhook deliveries, for successes and failures", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* tenantId
        const [subscription] = yield* sql<{ id: string }>`
          INSERT INTO webhook_subscriptions (tenant_id, name, url) VALUES (${tenant}, 'all events', 'https://example.com/hook')
          RETURNING id`
        const remote = yield* localServer((
          request
        ) => (request.url.startsWith("/ok") ? jsonAnswer(200, { ok: true }) : jsonAnswer(500, {})))
        const ok = yield* createAction({
          url: `${remote.url}/ok`,
          parameters: [param("b", "integer", false), param("a", "string", false)]
        })
        const broken = yield* createAction({ url: `${remote.url}/broken` })
        const userCaller: Caller = { kind: "user", userId: crypto.randomUUID() }
        const params = { b: 2, a: "x" }

        yield* execute(ok.id, params, unboundKey)
        const confirmer = { type: "user" as const, userId: userCaller.kind === "user" ? userCaller.userId : "" }
        yield* failureOf(execute(broken.id, {}, userCaller, {
          trigger: { type: "agent", agentId: crypto.randomUUID(), channel: "chat", onBehalfOf: confirmer },
          confirmation: { by: confirmer, text: "yes", at: new Date() },
          chatId: "chat-1"
        }))

        const executions = yield* sql<{
          action_id: string
          caller_kind: string
          caller_id: string
          params_digest: string
          status_code: number
          success: boolean
          error: string | null
          supervision: string
          chat_id: string | null
          duration_ms: number
        }>`
          SELECT action_id, caller_kind, caller_id, params_digest, status_code, success, error, supervision, chat_id, duration_ms
          FROM action_executions WHERE action_id IN (${ok.id}, ${broken.id}) ORDER BY created_at`
        assert.strictEqual(executions.length, 2)
        const [first, second] = executions
        assert.deepInclude(first, {
          action_id: ok.id,
          caller_kind: "key",
          caller_id: unboundKey.kind === "key" ? unboundKey.keyId : "",
          params_digest: createHash("sha256").update(canonicalJson(params)).digest("hex"),
          status_code: 200,
          success: true,
          error: null,
          supervision: "autonomous",
          chat_id: null
        })
        assert.deepInclude(second, {
          action_id: broken.id,
          caller_kind: "user",
          caller_id: userCaller.kind === "user" ? userCaller.userId : "",
          status_code: 500,
          success: false,
          supervision: "human_confirmed",
          chat_id: "chat-1"
        })
        assert.isTrue(first.duration_ms >= 0)

        const audit = yield* sql<{ event: string; actor: string; target: string }>`
          SELECT event, actor, target FROM audit_logs
          WHERE tenant_id = ${tenant} AND target IN (${`action:${ok.id}`}, ${`action:${broken.id}`}) ORDER BY seq`
        assert.deepStrictEqual(audit.map((a) => a.event), ["action.executed", "action.failed"])
        assert.strictEqual(audit[1].actor, `user:${userCaller.kind === "user" ? userCaller.userId : ""}`)
        const chain = yield* (yield* AuditLog).verify("audit_logs", tenant)
        assert.strictEqual(chain.entries_invalid, 0)

        const deliveries = yield* sql<{ event: string; status: string; payload: any }>`
          SELECT event, status, payload FROM webhook_deliveries WHERE subscription_id = ${subscription.id} ORDER BY seq`
        assert.deepStrictEqual(deliveries.map((d) => [d.event, d.status]), [
          ["on_action_executed", "pending"],
          ["on_action_failed", "pending"]
        ])
        assert.strictEqual(deliveries[0].payload.tenant_id, tenant)
        assert.strictEqual(deliveries[0].payload.data.action_id, ok.id)
        assert.strictEqual(deliveries[1].payload.data.status_code, 500)
      }))

    it.effect("a request the caller got wrong (400, 404) records nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({ url: remote.url, parameters: [param("q", "string", true)] })
        yield* failureOf(execute(action.id, {}))
        const [{ n }] = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM action_executions WHERE action_id = ${action.id}`
        assert.strictEqual(n, 0)
      }))
  })
})

layer(servicesFor({ ...env, ACTIONS_ALLOW_PRIVATE_NETWORKS: "false" }), serverSuite)(
  "outbound safety without ACTIONS_ALLOW_PRIVATE_NETWORKS",
  (it) => {
    it.effect("an action aimed at a loopback address is refused without calling it", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({ url: remote.url })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.strictEqual(failure.success, false)
        assert.strictEqual(failure.status_code, 502)
        assert.include(failure.response as string, "loopback")
        assert.include(failure.response as string, "ACTIONS_ALLOW_PRIVATE_NETWORKS")
        assert.strictEqual(remote.received.length, 0)
      }))

    it.effect("a host name that resolves to loopback (localhost) is refused: the resolved address is what counts", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => jsonAnswer(200, {}))
        const action = yield* createAction({ url: `http://localhost:${new URL(remote.url).port}/` })
        const failure = yield* failureOf(execute(action.id))
        assert.strictEqual(failure._tag, "ActionFailed")
        if (failure._tag !== "ActionFailed") return
        assert.include(failure.response as string, "localhost resolves to")
        assert.strictEqual(remote.received.length, 0)
      }))

    it.effect("private, metadata and IPv4-mapped targets are refused, and schemes other than http(s)", () =>
      Effect.gen(function*() {
        for (
          const url of [
            "http://10.0.0.8/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::ffff:127.0.0.1]/",
            "http://[fd00:ec2::254]/",
            "file:///etc/passwd",
            "ftp://example.com/"
          ]
        ) {
          const action = yield* createAction({ url })
          const failure = yield* failureOf(execute(action.id))
          assert.strictEqual(failure._tag, "ActionFailed", url)
          if (failure._tag !== "ActionFailed") return
          assert.include(failure.response as string, "refused", url)
        }
      }))

    it.effect("the connect-time lookup refuses what the check refuses, so a DNS answer that changes cannot slip through", () =>
      Effect.gen(function*() {
        const guard = yield* OutboundGuard
        const error = yield* Effect.callback<NodeJS.ErrnoException | null>((resume) => {
          guard.lookup("localhost", { all: true }, (error) => resume(Effect.succeed(error)))
        })
        assert.strictEqual(error?.code, refusedLookupCode)
      }))

    it.effect("classifies addresses", () =>
      Effect.sync(() => {
        const refused: Record<string, string> = {
          "127.0.0.1": "loopback",
          "::1": "loopback",
          "10.1.2.3": "private",
          "172.20.0.1": "private",
          "192.168.1.1": "private",
          "100.64.0.1": "carrier-grade NAT",
          "169.254.169.254": "cloud metadata",
          "fd00:ec2::254": "unique local",
          "169.254.10.1": "link-local",
          "fe80::1": "link-local",
          "fc00::1": "unique local",
          "0.0.0.0": "unspecified",
          "::": "unspecified",
          "224.0.0.1": "multicast",
          "ff02::1": "multicast",
          "::ffff:10.0.0.1": "private",
          "64:ff9b::7f00:1": "loopback"
        }
        for (const [address, reason] of Object.entries(refused)) {
          assert.include(refusalReason(address) ?? "", reason, address)
        }
        for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "172.32.0.1"]) {
          assert.isUndefined(refusalReason(address), address)
        }
      }))
  }
)
