/**
 * The `agent-platform` CLI (run in-process, see CliProcess.ts) against an
 * in-process server, each test with its own session file in a temporary
 * directory: signing in and out, keys, users, audit, and how failures read —
 * an unreachable, slow or foreign server, usage errors naming the command as
 * the user typed it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option, Queue, Terminal } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { existsSync, statSync, writeFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer } from "node:net"
import { join } from "node:path"
import { localServer } from "../../server/test/LocalHttp.ts"
import {
  adminEmail,
  adminPassword,
  http,
  layer as testServer,
  serverSuite,
  TestServer
} from "../../server/test/TestServer.ts"
import { run, temporaryDirectory } from "./CliProcess.ts"
import { cliUser, signedInAdmin, storedSession } from "./CliUser.ts"

const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })

/** A port nothing listens on. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 9))
    })
  })
)

/** A stand-in for a proxy in front of the service: every request gets `status` with `body`. */
const proxyAnswering = (status: number, contentType: string, body: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
        const server = createHttpServer((_request, response) =>
          response.writeHead(status, { "content-type": contentType }).end(body)
        )
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resolve({ url: `http://127.0.0.1:${port}`, close: () => server.close() })
        })
      })
    ),
    (proxy) => Effect.sync(proxy.close)
  )

/** A terminal whose user types `text` and presses return; what the CLI shows lands in `shown`. */
const typingTerminal = (text: string, shown: Array<string>) =>
  Terminal.make({
    columns: Effect.succeed(80),
    rows: Effect.succeed(24),
    size: Effect.die("unused"),
    readLine: Effect.die("unused"),
    display: (output) => Effect.sync(() => void shown.push(output)),
    readInput: Effect.gen(function*() {
      const queue = yield* Queue.make<Terminal.UserInput, any>()
      const key = (name: string) => ({ name, ctrl: false, meta: false, shift: false })
      yield* Queue.offerAll(queue, [
        ...[...text].map((char) => ({ input: Option.some(char), key: key(char) })),
        { input: Option.none(), key: key("return") }
      ])
      return queue
    })
  })

layer(testServer(), serverSuite)("agent-platform CLI", (it) => {
  describe("login", () => {
    it.effect("stores { url, sessionToken, email } in a 0600 file, creating its directory 0700", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const result = yield* user.login()
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stderr, "")
        assert.include(result.stdout, `Signed in to ${user.baseUrl} as ${adminEmail}`)
        const stored = storedSession(user.configFile)
        assert.deepStrictEqual(Object.keys(stored).sort(), ["email", "sessionToken", "url"])
        assert.strictEqual(stored.url, user.baseUrl)
        assert.strictEqual(stored.email, adminEmail)
        assert.strictEqual(statSync(user.configFile).mode & 0o777, 0o600)
        assert.strictEqual(statSync(join(user.dir, "config", "agent-platform")).mode & 0o777, 0o700)
        const me = yield* http("/api/auth/me", { headers: { cookie: `Service-Token=${stored.sessionToken}` } })
        assert.strictEqual(me.status, 200)
        assert.strictEqual(me.body.email, adminEmail)
      }))

    it.effect("without AGENT_PLATFORM_CONFIG the file is $XDG_CONFIG_HOME/agent-platform/config.json, else ~/.config/...", () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const { baseUrl } = yield* TestServer
        const args = ["--url", baseUrl, "login", "--email", adminEmail, "--password", adminPassword]
        const xdg = yield* run(args, { XDG_CONFIG_HOME: join(dir, "xdg"), HOME: join(dir, "home") })
        assert.strictEqual(xdg.code, 0, xdg.stderr)
        assert.strictEqual(storedSession(join(dir, "xdg", "agent-platform", "config.json")).email, adminEmail)
        assert.isFalse(existsSync(join(dir, "home", ".config")))
        const home = yield* run(args, { HOME: join(dir, "home") })
        assert.strictEqual(home.code, 0, home.stderr)
        const file = join(dir, "home", ".config", "agent-platform", "config.json")
        assert.strictEqual(storedSession(file).email, adminEmail)
        assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      }))

    it.effect("a wrong password exits 1 with the server's message on stderr, and stores nothing", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const admin = yield* server.admin
        yield* admin.api.admin.createUser({
          payload: {
            email: "wrong-password@example.com",
            nombre: "Wrong",
            password: "Correct-Horse-9",
            role_id: "r_user"
          }
        })
        const user = yield* cliUser
        const result = yield* user.login("wrong-password@example.com", "not-the-password")
        const answer = yield* http("/api/auth/login", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "wrong-password@example.com", password: "not-the-password" })
        })
        assert.strictEqual(answer.status, 401)
        assert.strictEqual(result.code, 1)
        assert.strictEqual(result.stderr, `error: ${answer.body.error}\n`)
        assert.strictEqual(result.stdout, "")
        assert.isFalse(existsSync(user.configFile))
      }))

    it.effect("prompts for the password, without echoing it, when --password is omitted", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const shown: Array<string> = []
        const result = yield* run(["--url", user.baseUrl, "login", "--email", adminEmail], user.env, {
          terminal: typingTerminal(adminPassword, shown)
        })
        assert.strictEqual(result.code, 0, result.stderr)
        assert.match(shown.join(""), /Password/)
        assert.notInclude(shown.join(""), adminPassword)
        assert.strictEqual(storedSession(user.configFile).email, adminEmail)
      }))

    it.effect("without a terminal to prompt on, a missing --password is a usage error", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const result = yield* user.run("--url", user.baseUrl, "login", "--email", adminEmail)
        assert.strictEqual(result.code, 1)
        assert.strictEqual(
          result.stderr,
          "error: no password: pipe it to --password-stdin, or pass --password (see `agent-platform login --help`)\n"
        )
        assert.isFalse(existsSync(user.configFile))
      }))
  })

  describe("login --password-stdin", () => {
    it.effect("reads the password from standard input, without its final line break", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const result = yield* user.runWith(
          { stdin: `${adminPassword}\r\n` },
          "--url",
          user.baseUrl,
          "login",
          "--email",
          adminEmail,
          "--password-stdin"
        )
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(storedSession(user.configFile).email, adminEmail)
      }))

    it.effect("refuses empty standard input, and --password with --password-stdin, storing nothing", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const login = ["--url", user.baseUrl, "login", "--email", adminEmail, "--password-stdin"]
        const empty = yield* user.runWith({ stdin: "" }, ...login)
        assert.strictEqual(empty.code, 1)
        assert.match(
          empty.stderr,
          /^error: no password on standard input: pipe it in.*\(see `agent-platform login --help`\)\n$/
        )
        const both = yield* user.runWith({ stdin: adminPassword }, ...login, "--password", adminPassword)
        assert.strictEqual(both.code, 1)
        assert.strictEqual(
          both.stderr,
          "error: pass either --password or --password-stdin, not both (see `agent-platform login --help`)\n"
        )
        assert.isFalse(existsSync(user.configFile))
      }))
  })

  describe("hints name the command as it was run", () => {
    it.effect("`pnpm cli ...` from a checkout, `npm run cli ...` with npm, `agent-platform ...` installed", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const as = (env: Record<string, string>) => run(["--url", user.baseUrl, "whoami"], { ...user.env, ...env })
        const pnpm = yield* as({
          npm_lifecycle_event: "cli",
          npm_config_user_agent: "pnpm/10.34.9 npm/? node/v20.20.2 linux x64"
        })
        assert.strictEqual(pnpm.stderr, "error: not signed in: run `pnpm cli login`\n")
        const npm = yield* as({
          npm_lifecycle_event: "cli",
          npm_config_user_agent: "npm/10.8.2 node/v20.20.2 linux x64"
        })
        assert.strictEqual(npm.stderr, "error: not signed in: run `npm run cli login`\n")
        const installed = yield* as({})
        assert.strictEqual(installed.stderr, "error: not signed in: run `agent-platform login`\n")
      }))

    it.effect("help and usage errors too", () =>
      Effect.gen(function*() {
        const env = { npm_lifecycle_event: "cli", npm_config_user_agent: "pnpm/10.34.9" }
        const help = yield* run(["agents", "create", "--help"], env)
        assert.strictEqual(help.code, 0, help.stderr)
        assert.match(help.stdout, /pnpm cli agents create --space support --name Support/)
        assert.notMatch(help.stdout, /(?<![@/])agent-platform agents/)
        const usage = yield* run(["spaces", "create", "--code", "support"], env)
        assert.strictEqual(usage.code, 1)
        assert.strictEqual(usage.stderr, "error: Missing required flag: --name (see `pnpm cli spaces create --help`)\n")
      }))

    it.effect("the top-level help lists every command group", () =>
      Effect.gen(function*() {
        const help = yield* run(["--help"], {})
        assert.strictEqual(help.code, 0, help.stderr)
        for (
          const command of [
            "login",
            "spaces",
            "agents",
            "actions",
            "knowledge",
            "chat",
            "keys",
            "webhooks",
            "users",
            "tenants",
            "flags"
          ]
        ) {
          assert.match(help.stdout, new RegExp(`^  ${command} `, "m"), command)
        }
        assert.match(help.stdout, /--timeout/)
      }))
  })

  describe("a service that does not answer in time", () => {
    it.effect("ends after --timeout seconds with one line saying so", () =>
      Effect.gen(function*() {
        const silent = yield* localServer(() => "hang")
        const user = yield* cliUser
        for (const args of [["health"], ["chat", "--key", "sk_live_x", "--message", "hi"]]) {
          const result = yield* user.run("--url", silent.url, "--timeout", "0.5", ...args)
          assert.strictEqual(result.code, 1, args.join(" "))
          assert.strictEqual(
            result.stderr,
            `error: no answer from ${silent.url} within 0.5 s: the service may be overloaded or stuck; try again, or wait longer with --timeout SECONDS\n`,
            args.join(" ")
          )
        }
        assert.strictEqual(silent.received.length, 2)
      }))

    it.effect("--timeout must be a positive number of seconds", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const result = yield* user.run("--url", user.baseUrl, "--timeout", "0", "health")
        assert.strictEqual(result.code, 1)
        assert.match(result.stderr, /^error: .*timeout.*\(see `agent-platform health --help`\)\n$/)
      }))
  })

  describe("a URL that is not an Agent Platform server", () => {
    it.effect("says so, naming what GET /health answered, instead of a decoding error", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const website = yield* localServer(() => ({
          status: 404,
          body: "<html>Not Found</html>",
          headers: { "content-type": "text/html; charset=utf-8" }
        }))
        const api = yield* localServer(() => ({
          status: 200,
          body: JSON.stringify({ ok: true }),
          headers: { "content-type": "application/json" }
        }))
        for (const server of [website, api]) {
          for (
            const args of [["health"], ["login", "--email", adminEmail, "--password", adminPassword], [
              "chat",
              "--key",
              "sk_live_x",
              "--message",
              "hi"
            ]]
          ) {
            const result = yield* user.run("--url", server.url, ...args)
            assert.strictEqual(result.code, 1, args.join(" "))
            const [status, type] = server === website ? [404, "text/html"] : [200, "application/json"]
            assert.strictEqual(
              result.stderr,
              `error: ${server.url} is not an Agent Platform server: GET /health answered HTTP ${status} (${type}) instead of its health report. Check --url or AGENT_PLATFORM_URL.\n`,
              args.join(" ")
            )
          }
        }
        assert.isFalse(existsSync(user.configFile))
      }))
  })

  describe("whoami", () => {
    it.effect("shows the stored session's email, role and tenant, on the stored URL", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const server = yield* TestServer
        const me = yield* (yield* server.admin).api.auth.me()
        const result = yield* user.run("whoami")
        assert.strictEqual(result.code, 0, result.stderr)
        assert.match(result.stdout, new RegExp(`^email +${adminEmail}$`, "m"))
        assert.match(result.stdout, /^role +r_superadmin$/m)
        assert.match(result.stdout, new RegExp(`^tenant +${me.tenant_id}$`, "m"))
        const json = yield* user.run("whoami", "--json")
        assert.strictEqual(json.code, 0, json.stderr)
        assert.deepStrictEqual(JSON.parse(json.stdout), me)
      }))

    it.effect("without login, every session command says \"not signed in\" and exits 1", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        for (const args of [["whoami"], ["keys", "list"], ["audit", "verify"], ["logout"]]) {
          const result = yield* user.run("--url", user.baseUrl, ...args)
          assert.strictEqual(result.code, 1, args.join(" "))
          assert.strictEqual(result.stderr, "error: not signed in: run `agent-platform login`\n")
          assert.strictEqual(result.stdout, "")
        }
      }))

    it.effect("the stored session is not sent to another URL", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const other = `http://127.0.0.1:${yield* closedPort}`
        const result = yield* run(["whoami"], { ...user.env, AGENT_PLATFORM_URL: other })
        assert.strictEqual(result.code, 1)
        assert.strictEqual(
          result.stderr,
          `error: not signed in to ${other}: run \`agent-platform login --url ${other}\`\n`
        )
      }))
  })

  describe("a service that cannot be reached", () => {
    it.effect("says so in one line and exits 1", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const url = `http://127.0.0.1:${yield* closedPort}`
        for (const args of [["health"], ["login", "--email", adminEmail, "--password", adminPassword]]) {
          const result = yield* user.run("--url", url, ...args)
          assert.strictEqual(result.code, 1)
          assert.strictEqual(result.stderr, `error: cannot reach ${url}: is the service running?\n`)
        }
      }))
  })

  describe("an answer the API does not declare", () => {
    it.effect("shows the body's error when it has one, else the status", () =>
      Effect.gen(function*() {
        const user = yield* cliUser
        const json = yield* proxyAnswering(502, "application/json", JSON.stringify({ error: "upstream is restarting" }))
        const withMessage = yield* user.run("--url", json.url, "health")
        assert.strictEqual(withMessage.code, 1)
        assert.strictEqual(withMessage.stderr, "error: upstream is restarting\n")
        const html = yield* proxyAnswering(502, "text/html", "<html><body>Bad Gateway</body></html>")
        const withoutMessage = yield* user.run("--url", html.url, "health")
        assert.strictEqual(withoutMessage.code, 1)
        assert.strictEqual(withoutMessage.stderr, "error: the server answered HTTP 502\n")
      }))
  })

  describe("keys", () => {
    it.effect("create prints the key once with a \"store it now\" line, and the key works", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const result = yield* user.run(
          "keys",
          "create",
          "--name",
          "cli widget",
          "--scope",
          "agents",
          "--scope",
          "chat",
          "--rpm",
          "120"
        )
        assert.strictEqual(result.code, 0, result.stderr)
        const keys = result.stdout.match(/sk_live_[0-9a-f]{64}/g) ?? []
        assert.strictEqual(keys.length, 1)
        assert.match(result.stdout, /Store it now/)
        const agents = yield* http("/v1/agents", bearer(keys[0]!))
        assert.notInclude([401, 403], agents.status)
      }))

    it.effect("create --json prints the creation result", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const result = yield* user.run("--json", "keys", "create", "--name", "scripted", "--scope", "agents:read")
        assert.strictEqual(result.code, 0, result.stderr)
        const created = JSON.parse(result.stdout)
        assert.deepStrictEqual(Object.keys(created).sort(), ["id", "key", "message", "prefix"])
        assert.match(created.key, /^sk_live_[0-9a-f]{64}$/)
        assert.strictEqual(created.prefix, created.key.slice(0, 16))
      }))

    it.effect("list shows the key as a table, and with --json as the API's body", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const created = JSON.parse(
          (yield* user.run(
            "keys",
            "create",
            "--json",
            "--name",
            "listed key",
            "--scope",
            "chat",
            "--scope",
            "agents",
            "--rpm",
            "42"
          )).stdout
        )
        const table = yield* user.run("keys", "list")
        assert.strictEqual(table.code, 0, table.stderr)
        const lines = table.stdout.trimEnd().split("\n")
        assert.match(lines[0], /^ID +NAME +PREFIX +SCOPES +SPACE +RPM +ACTIVE +LAST USED +CREATED$/)
        const row = lines.find((line) => line.startsWith(created.id))
        assert.isDefined(row)
        assert.match(
          row!,
          new RegExp(
            `^${created.id} +listed key +${created.prefix} +chat,agents +- +42 +yes +- +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`
          )
        )
        assert.notInclude(table.stdout, created.key)

        const json = yield* user.run("keys", "list", "--json")
        assert.strictEqual(json.code, 0, json.stderr)
        const body = yield* http("/v1/keys", {
          headers: { cookie: `Service-Token=${storedSession(user.configFile).sessionToken}` }
        })
        const listed = JSON.parse(json.stdout)
        assert.deepStrictEqual(
          listed.keys.find((key: { id: string }) => key.id === created.id),
          body.body.keys.find((key: { id: string }) => key.id === created.id)
        )
        assert.deepStrictEqual(Object.keys(listed), ["keys"])
      }))

    it.effect("revoke: the key is refused (401) from then on", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const created = JSON.parse(
          (yield* user.run("--json", "keys", "create", "--name", "doomed", "--scope", "agents")).stdout
        )
        assert.notInclude([401, 403], (yield* http("/v1/agents", bearer(created.key))).status)
        const result = yield* user.run("keys", "revoke", created.id)
        assert.strictEqual(result.code, 0, result.stderr)
        assert.include(result.stdout, created.id)
        const after = yield* http("/v1/agents", bearer(created.key))
        assert.strictEqual(after.status, 401)
        const listed = JSON.parse((yield* user.run("keys", "list", "--json")).stdout)
        assert.isFalse(listed.keys.find((key: { id: string }) => key.id === created.id).is_active)
      }))

    it.effect("the server's refusal is the message: an unknown key id", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const id = crypto.randomUUID()
        const result = yield* user.run("keys", "revoke", id)
        const answer = yield* http(`/v1/keys/${id}`, {
          method: "DELETE",
          headers: { cookie: `Service-Token=${storedSession(user.configFile).sessionToken}` }
        })
        assert.strictEqual(answer.status, 404)
        assert.strictEqual(result.code, 1)
        assert.strictEqual(result.stderr, `error: ${answer.body.error}\n`)
      }))
  })

  describe("users create", () => {
    it.effect("creates a user who can then sign in; --json prints the API's body", () =>
      Effect.gen(function*() {
        const admin = yield* signedInAdmin
        const created = yield* admin.run(
          "users",
          "create",
          "--email",
          "ana@example.com",
          "--name",
          "Ana",
          "--role",
          "r_user",
          "--password",
          "Correct-Horse-9"
        )
        assert.strictEqual(created.code, 0, created.stderr)
        assert.include(created.stdout, "ana@example.com")
        const json = yield* admin.run(
          "--json",
          "users",
          "create",
          "--email",
          "bea@example.com",
          "--name",
          "Bea",
          "--role",
          "r_security_officer",
          "--password",
          "Correct-Horse-9"
        )
        assert.strictEqual(json.code, 0, json.stderr)
        const user = JSON.parse(json.stdout)
        assert.strictEqual(user.email, "bea@example.com")
        assert.strictEqual(user.role_id, "r_security_officer")
        assert.strictEqual(user.active, true)

        const ana = yield* cliUser
        const login = yield* ana.login("ana@example.com", "Correct-Horse-9")
        assert.strictEqual(login.code, 0, login.stderr)
        assert.match((yield* ana.run("whoami")).stdout, /^role +r_user$/m)
      }))

    it.effect("a password the policy refuses: exit 1 with the server's message", () =>
      Effect.gen(function*() {
        const admin = yield* signedInAdmin
        const result = yield* admin.run(
          "users",
          "create",
          "--email",
          "weak@example.com",
          "--name",
          "Weak",
          "--role",
          "r_user",
          "--password",
          "short"
        )
        assert.strictEqual(result.code, 1)
        assert.match(result.stderr, /^error: Password must have at least \d+ characters.*\n$/)
      }))
  })

  describe("users list", () => {
    it.effect("shows the tenant's users as a table, and with --json as the API's body", () =>
      Effect.gen(function*() {
        const admin = yield* signedInAdmin
        const created = yield* admin.runWith(
          { stdin: "Correct-Horse-9\n" },
          "users",
          "create",
          "--email",
          "listed@example.com",
          "--name",
          "Listed",
          "--role",
          "r_user",
          "--password-stdin"
        )
        assert.strictEqual(created.code, 0, created.stderr)
        const table = yield* admin.run("users", "list")
        assert.strictEqual(table.code, 0, table.stderr)
        const lines = table.stdout.trimEnd().split("\n")
        assert.match(lines[0], /^ID +EMAIL +NAME +ROLE +ACTIVE +BLOCKED +MFA +LAST LOGIN +CREATED$/)
        assert.isTrue(lines.some((line) => / listed@example\.com +Listed +r_user +yes +no +no +- +\d{4}-/.test(line)))
        assert.isTrue(lines.some((line) => line.includes(` ${adminEmail} `)))
        const json = JSON.parse((yield* admin.run("--json", "users", "list")).stdout)
        const body = yield* http("/api/admin/users", {
          headers: { cookie: `Service-Token=${storedSession(admin.configFile).sessionToken}` }
        })
        assert.deepStrictEqual(json, body.body)
      }))
  })

  describe("logout", () => {
    it.effect("ends the session on the server and deletes the stored one", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const { sessionToken } = storedSession(user.configFile)
        const result = yield* user.run("logout")
        assert.strictEqual(result.code, 0, result.stderr)
        assert.isFalse(existsSync(user.configFile))
        const me = yield* http("/api/auth/me", { headers: { cookie: `Service-Token=${sessionToken}` } })
        assert.strictEqual(me.status, 401)
        assert.strictEqual((yield* user.run("whoami")).stderr, "error: not signed in: run `agent-platform login`\n")
      }))

    it.effect("with the service down, deletes the stored session anyway, warning that the server's stays valid", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        const url = `http://127.0.0.1:${yield* closedPort}`
        writeFileSync(user.configFile, JSON.stringify({ ...storedSession(user.configFile), url }))
        const result = yield* user.run("logout")
        assert.strictEqual(result.code, 0, result.stderr)
        assert.isFalse(existsSync(user.configFile))
        assert.strictEqual(
          result.stderr,
          `warning: the session could not be ended on the server (cannot reach ${url}: is the service running?); it stays valid there until it expires\n`
        )
        assert.strictEqual(result.stdout, `Signed out of ${url} on this machine only.\n`)
      }))

    it.effect("a session file that is not one is reported, not ignored", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        writeFileSync(user.configFile, "{ not json")
        const result = yield* user.run("whoami")
        assert.strictEqual(result.code, 1)
        assert.strictEqual(
          result.stderr,
          `error: ${user.configFile} is not a session file: run \`agent-platform login\` to replace it\n`
        )
        assert.strictEqual((yield* user.login()).code, 0)
        assert.strictEqual((yield* user.run("whoami")).code, 0)
      }))
  })

  // Last: it alters the tenant's audit chain for good.
  describe("audit verify", () => {
    it.effect("exits 0 while the chains verify, and 1 once a row was altered in SQL", () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        assert.strictEqual((yield* user.run("keys", "create", "--name", "audited", "--scope", "chat")).code, 0)
        const clean = yield* user.run("audit", "verify")
        assert.strictEqual(clean.code, 0, clean.stderr)
        assert.match(clean.stdout, /^audit_logs +\d+ +0 +-$/m)
        assert.match(clean.stdout, /All \d+ entries verify/)
        const cleanJson = JSON.parse((yield* user.run("audit", "verify", "--json")).stdout)
        assert.strictEqual(cleanJson.entries_invalid, 0)

        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE audit_logs SET data = jsonb_set(data, '{name}', '"x"') WHERE event = 'key.created'`

        const tampered = yield* user.run("audit", "verify")
        assert.strictEqual(tampered.code, 1)
        assert.match(tampered.stdout, /^audit_logs +\d+ +[1-9]\d* +[0-9a-f-]{36}$/m)
        assert.match(
          tampered.stderr,
          /^error: [1-9]\d* of \d+ audit entries do not verify \(first: [0-9a-f-]{36}\): the audit log was altered\n$/
        )
        const json = yield* user.run("audit", "verify", "--json")
        assert.strictEqual(json.code, 1)
        const body = JSON.parse(json.stdout)
        assert.isAbove(body.entries_invalid, 0)
        assert.include(json.stderr, body.first_invalid_id)
      }), 180_000)
  })
})
