/**
 * `agent-platform scim token create`: the real CLI as a child process against
 * an in-process server, signed in as the bootstrap superadmin.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { join } from "node:path"
import {
  adminEmail,
  adminPassword,
  http,
  layer as testServer,
  serverSuite,
  TestServer
} from "../../server/test/TestServer.ts"
import { run, temporaryDirectory } from "./CliProcess.ts"

const cliUser = Effect.gen(function*() {
  const dir = yield* temporaryDirectory
  const env = { AGENT_PLATFORM_CONFIG: join(dir, "config.json") }
  const { baseUrl } = yield* TestServer
  return { baseUrl, run: (...args: ReadonlyArray<string>) => run(["--url", baseUrl, ...args], env) }
})

const signedIn = Effect.gen(function*() {
  const user = yield* cliUser
  const login = yield* user.run("login", "--email", adminEmail, "--password", adminPassword)
  assert.strictEqual(login.code, 0, login.stderr)
  return user
})

layer(testServer(), serverSuite)("agent-platform scim token create", (it) => {
  it.effect("prints a scim-scoped key once with the base URL to paste into Okta or Entra; the key provisions", () =>
    Effect.gen(function*() {
      const user = yield* signedIn
      const result = yield* user.run("scim", "token", "create", "--name", "okta")
      assert.strictEqual(result.code, 0, result.stderr)
      const keys = result.stdout.match(/sk_live_[0-9a-f]{64}/g) ?? []
      assert.strictEqual(keys.length, 1)
      assert.include(result.stdout, `SCIM base URL:  ${user.baseUrl}/v1/scim\n`)
      assert.match(result.stdout, /Tenant URL = the base URL, Secret Token = the token/)
      assert.match(result.stdout, /only time it is shown/)
      const auth = { headers: { authorization: `Bearer ${keys[0]}` } }
      const users = yield* http("/v1/scim/Users?count=1", auth)
      assert.strictEqual(users.status, 200)
      assert.strictEqual(users.body.totalResults >= 1, true)
      // The token carries the scim scope only.
      assert.strictEqual((yield* http("/v1/agents", auth)).status, 403)
      const listed = yield* user.run("keys", "list", "--json")
      const key = JSON.parse(listed.stdout).keys.find((k: { name: string }) => k.name === "okta")
      assert.strictEqual(key.scopes, "[\"scim\"]")
    }))

  it.effect("--json prints the creation result with base_url; --rpm sets the token's limit", () =>
    Effect.gen(function*() {
      const user = yield* signedIn
      const result = yield* user.run("--json", "scim", "token", "create", "--rpm", "120")
      assert.strictEqual(result.code, 0, result.stderr)
      const created = JSON.parse(result.stdout)
      assert.deepStrictEqual(Object.keys(created).sort(), ["base_url", "id", "key", "message", "prefix"])
      assert.strictEqual(created.base_url, `${user.baseUrl}/v1/scim`)
      const listed = JSON.parse((yield* user.run("keys", "list", "--json")).stdout)
      const key = listed.keys.find((k: { id: string }) => k.id === created.id)
      assert.deepInclude(key, { name: "SCIM provisioning", rate_limit_rpm: 120 })
    }))

  it.effect("without a session it says so and exits 1", () =>
    Effect.gen(function*() {
      const user = yield* cliUser
      const result = yield* user.run("scim", "token", "create")
      assert.strictEqual(result.code, 1)
      assert.strictEqual(result.stderr, "error: not signed in: run `agent-platform login`\n")
    }))
})
