/** The Promise flavour of the SDK, against the test server: the same calls, Promises, typed rejections. */
import {
  ApiError,
  ConnectionError,
  IngestionNotReadyError,
  InvalidInputError,
  makePromiseClient,
  PlatformError,
  TimeoutError,
  UnexpectedResponse
} from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { refundPolicy } from "./Documents.ts"
import { closedPort, jsonAnswer, localServer, refusedMessage, timedOutMessage } from "./LocalHttp.ts"
import {
  adminClient,
  adminEmail,
  adminPassword,
  createKey,
  layer as testServer,
  serverSuite,
  TestServer
} from "./TestServer.ts"

/** What a Promise settles to: its value, or what it rejected with. */
const settle = <A>(promise: () => Promise<A>) =>
  Effect.promise(() =>
    promise().then((value) => ({ value, error: undefined }), (error: unknown) => ({ value: undefined, error }))
  )

/** A client disposed with the test. */
const promiseClient = (options: Parameters<typeof makePromiseClient>[0]) =>
  Effect.acquireRelease(
    Effect.sync(() => makePromiseClient(options)),
    (client) => Effect.promise(() => client.dispose())
  )

layer(testServer(), serverSuite)("makePromiseClient", (it) => {
  it.effect("signs in, keeps the session, calls endpoints and rejects with the API's typed errors", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = makePromiseClient({ baseUrl: server.baseUrl })
      yield* Effect.addFinalizer(() => Effect.promise(() => client.dispose()))
      const outcome = yield* Effect.promise(async () => {
        const session = await client.auth.login({ payload: { email: adminEmail, password: adminPassword } })
        const me = await client.auth.me()
        const token = await client.sessionToken()
        const created = await client.keys.create({ payload: { name: "promise key", scopes: ["agents:read"] } })
        const rejected = await client.keys.revoke({ params: { id: crypto.randomUUID() } }).then(
          () => undefined,
          (error: unknown) => error
        )
        return { session, me, token, created, rejected }
      })
      assert.strictEqual(outcome.session.email, adminEmail)
      assert.strictEqual(outcome.me.user_id, outcome.session.user_id)
      assert.isString(outcome.token)
      assert.match(outcome.created.key, /^sk_live_/)
      assert.instanceOf(outcome.rejected, ApiError)
      assert.instanceOf(outcome.rejected, PlatformError)
      assert.deepInclude(outcome.rejected as object, { _tag: "NotFound", status: 404 })
      assert.match((outcome.rejected as Error).message, /not found/)

      const withKey = makePromiseClient({ baseUrl: server.baseUrl, apiKey: outcome.created.key })
      yield* Effect.addFinalizer(() => Effect.promise(() => withKey.dispose()))
      const agents = yield* Effect.promise(() => withKey.agents.list({ query: {} }))
      assert.isArray(agents.agents)
      const refused = yield* Effect.promise(() =>
        withKey.actions.list().then(() => undefined, (error: unknown) => error)
      )
      assert.instanceOf(refused, ApiError)
      assert.deepInclude(refused as object, { _tag: "ScopeMissing", status: 403 })
      assert.include((refused as ApiError).message, "actions")
      assert.deepInclude((refused as ApiError).body, { _tag: "ScopeMissing" })
    }).pipe(Effect.scoped))

  describe("when no answer, or no answer of this service, comes", () => {
    it.effect("a refused connection rejects with a ConnectionError: one line, no HTTP status", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const client = yield* promiseClient({ baseUrl: `http://127.0.0.1:${port}` })
        const { error } = yield* settle(() => client.health())
        assert.instanceOf(error, ConnectionError)
        assert.instanceOf(error, PlatformError)
        const refused = error as ConnectionError
        assert.strictEqual(refused._tag, "ConnectionError")
        assert.isUndefined(refused.status)
        assert.strictEqual(
          refused.message,
          refusedMessage(`http://127.0.0.1:${port}/health`)
        )
      }).pipe(Effect.scoped))

    it.effect("an answer that does not start within `timeout` rejects with a TimeoutError", () =>
      Effect.gen(function*() {
        const silent = yield* localServer(() => "hang")
        const client = yield* promiseClient({ baseUrl: silent.url, timeout: "300 millis" })
        const { error } = yield* settle(() => client.health())
        assert.instanceOf(error, TimeoutError)
        assert.deepInclude(error as object, { _tag: "TimeoutError", status: undefined })
        assert.strictEqual(
          (error as TimeoutError).message,
          timedOutMessage("GET", `${silent.url}/health`, "300ms")
        )
      }).pipe(Effect.scoped))

    it.effect("another service's answer rejects with UnexpectedResponse carrying its status", () =>
      Effect.gen(function*() {
        const other = yield* localServer(() => ({
          status: 502,
          body: "<html>Bad gateway</html>",
          headers: { "content-type": "text/html" }
        }))
        const client = yield* promiseClient({ baseUrl: other.url, apiKey: "sk_live_x" })
        const { error } = yield* settle(() => client.agents.list({ query: {} }))
        assert.instanceOf(error, UnexpectedResponse)
        assert.deepInclude(error as object, { _tag: "UnexpectedResponse", status: 502 })
        assert.include((error as UnexpectedResponse).message, "is it an Agent Platform service?")
      }).pipe(Effect.scoped))

    it.effect("arguments the contract refuses reject with InvalidInputError naming the field, and nothing is sent", () =>
      Effect.gen(function*() {
        const service = yield* localServer(() => jsonAnswer(201, {}))
        const client = yield* promiseClient({ baseUrl: service.url, apiKey: "sk_live_x" })
        const { error } = yield* settle(() =>
          client.keys.create({ payload: { name: "too fast", scopes: ["agents:read"], rate_limit_rpm: 200_000 } })
        )
        assert.instanceOf(error, InvalidInputError)
        assert.instanceOf(error, PlatformError)
        assert.deepInclude(error as object, { _tag: "InvalidInput", status: undefined })
        const message = (error as InvalidInputError).message
        assert.include(message, "nothing was sent")
        assert.include(message, "rate_limit_rpm")
        assert.include(message, "100000")
        assert.notInclude(message, "\n")
        assert.lengthOf(service.received, 0)
      }).pipe(Effect.scoped))

    it.effect("a 200 whose body the contract does not describe rejects with UnexpectedResponse, not InvalidInputError", () =>
      Effect.gen(function*() {
        const other = yield* localServer(() => jsonAnswer(200, { agents: "not a list" }))
        const client = yield* promiseClient({ baseUrl: other.url, apiKey: "sk_live_x" })
        const { error } = yield* settle(() => client.agents.list({ query: {} }))
        assert.instanceOf(error, UnexpectedResponse)
        assert.deepInclude(error as object, { _tag: "UnexpectedResponse" })
        assert.include((error as UnexpectedResponse).message, "the answer does not match the contract")
        assert.include((error as UnexpectedResponse).message, "agents")
        assert.lengthOf(other.received, 1)
      }).pipe(Effect.scoped))
  })

  describe("waitUntilReady", () => {
    it.effect("resolves with the file once ingestion made it ready; a document that fails rejects with IngestionNotReadyError", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const admin = yield* adminClient
        const space = yield* admin.api.admin.createSpace({ payload: { code: "promise-wait", name: "Promise wait" } })
          .pipe(Effect.orDie)
        const agent = yield* admin.api.agentsAdmin.create({
          payload: { space_id: space.id, name: "Returns", summary: "Returns and refunds", is_primary: true }
        }).pipe(Effect.orDie)
        const { key } = yield* createKey(["files"])
        const client = yield* promiseClient({ baseUrl: server.baseUrl, apiKey: key })
        const states: Array<string> = []
        const ready = yield* Effect.promise(async () => {
          const accepted = await client.knowledge.ingest({
            payload: { agent_id: agent.id, filename: "refunds.md", content: refundPolicy }
          })
          return client.waitUntilReady({ agentId: agent.id, fileId: accepted.file_id }, {
            timeout: "60 seconds",
            onProgress: (file) => states.push(file?.status ?? "missing")
          })
        })
        assert.strictEqual(ready.status, "ready")
        assert.strictEqual(ready.filename, "refunds.md")
        assert.strictEqual(states[states.length - 1], "ready")

        const binary = yield* Effect.promise(() =>
          client.knowledge.ingest({
            payload: { agent_id: agent.id, filename: "image.png", content: "\u0000\u0001PNG" }
          })
        )
        const { error } = yield* settle(() =>
          client.waitUntilReady({ agentId: agent.id, fileId: binary.file_id }, { timeout: "60 seconds" })
        )
        assert.instanceOf(error, IngestionNotReadyError)
        assert.strictEqual((error as IngestionNotReadyError)._tag, "IngestionNotReady")
        assert.strictEqual((error as IngestionNotReadyError).file?.status, "failed")
        assert.match((error as IngestionNotReadyError).message, /^ingestion failed: /)

        // A file the agent does not have (a typo, another agent's) is said at once, not as a timeout.
        const missing = yield* settle(() =>
          client.waitUntilReady({ agentId: agent.id, fileId: crypto.randomUUID() }, { timeout: "60 seconds" })
        )
        assert.instanceOf(missing.error, IngestionNotReadyError)
        assert.isUndefined((missing.error as IngestionNotReadyError).file)
        assert.match((missing.error as IngestionNotReadyError).message, /not found among agent .*'s knowledge/)
      }).pipe(Effect.scoped))
  })
})
