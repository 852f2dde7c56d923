/** The Promise flavour of the SDK, against the test server: the same calls, Promises, typed rejections. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makePromiseClient } from "@agent-platform/sdk"
import { adminEmail, adminPassword, serverSuite, TestServer, layer as testServer } from "./TestServer.ts"

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
        const rejected = await client.keys.revoke({ params: { id: crypto.randomUUID() } }).then(() => undefined, (error: unknown) => error)
        return { session, me, token, created, rejected }
      })
      assert.strictEqual(outcome.session.email, adminEmail)
      assert.strictEqual(outcome.me.user_id, outcome.session.user_id)
      assert.isString(outcome.token)
      assert.match(outcome.created.key, /^sk_live_/)
      assert.deepInclude(outcome.rejected as object, { _tag: "NotFound" })

      const withKey = makePromiseClient({ baseUrl: server.baseUrl, apiKey: outcome.created.key })
      yield* Effect.addFinalizer(() => Effect.promise(() => withKey.dispose()))
      const agents = yield* Effect.promise(() => withKey.agents.list({ query: {} }))
      assert.isArray(agents.agents)
      const refused = yield* Effect.promise(() => withKey.actions.list().then(() => undefined, (error: unknown) => error))
      assert.deepInclude(refused as object, { _tag: "ScopeMissing" })
    }).pipe(Effect.scoped))
})
