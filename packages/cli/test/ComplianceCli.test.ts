/**
 * The compliance, export, report and corrections commands, run as a child
 * process against an in-process server: downloads streamed to `--out` files
 * (or standard output) and read back, `compliance integrity`'s exit code, and
 * a download that gets no answer told as every command tells it.
 */
import { assert, layer } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { closedPort, localServer } from "../../server/test/LocalHttp.ts"
import {
  adminEmail,
  adminPassword,
  layer as testServer,
  serverSuite,
  TestServer
} from "../../server/test/TestServer.ts"
import { run, temporaryDirectory } from "./CliProcess.ts"
import { cliUser, signedInAdmin, storedSession } from "./CliUser.ts"

/** Each run starts a Node process with tsx: a dozen of them need more than the default minute on a loaded machine. */
const cliTimeout = 300_000

/** A space with a primary agent and one API-key chat message in it. */
const spaceWithChat = (code: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const admin = yield* server.admin
    const space = yield* admin.api.admin.createSpace({ payload: { code, name: code } })
    const agent = yield* admin.api.agentsAdmin.create({
      payload: { space_id: space.id, name: `${code} helper`, summary: "", is_primary: true }
    })
    const { key } = yield* admin.api.keys.create({
      payload: { name: `${code} key`, scopes: ["chat"], space_id: space.id }
    })
    yield* Effect.promise(async () => {
      const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ message: `hello from ${code}` })
      })
      await response.text()
    })
    return { space, agent }
  })

layer(testServer(), serverSuite)("compliance, export, report and corrections commands", (it) => {
  it.effect(
    "download to files and standard output; integrity exits 1 once a row was altered",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const admin = yield* server.admin
        yield* admin.api.admin.updateFlags({
          payload: { feature_compliance_pack: true, feature_decision_records: true }
        })
        const space = yield* admin.api.admin.createSpace({ payload: { code: "cli", name: "CLI" } })
        const agent = yield* admin.api.agentsAdmin.create({
          payload: { space_id: space.id, name: "Helper", summary: "", is_primary: true }
        })
        const { key } = yield* admin.api.keys.create({
          payload: { name: "=cli key", scopes: ["chat"], space_id: space.id }
        })
        yield* Effect.promise(async () => {
          const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
            body: JSON.stringify({ message: "hello, \"cli\"" })
          })
          await response.text()
        })

        const dir = yield* temporaryDirectory
        const env = { AGENT_PLATFORM_CONFIG: join(dir, "config.json") }
        const cli = (...args: ReadonlyArray<string>) => run(args, env)
        assert.strictEqual(
          (yield* run(["--url", server.baseUrl, "login", "--email", adminEmail, "--password", adminPassword], env))
            .code,
          0
        )

        const provenanceFile = join(dir, "provenance.csv")
        const exported = yield* cli("compliance", "export", "--format", "csv", "--out", provenanceFile)
        assert.strictEqual(exported.code, 0, exported.stderr)
        assert.match(
          exported.stderr,
          /^wrote .*provenance\.csv \(\d[\d,]* bytes, provenance-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv\)\n$/
        )
        assert.match(readFileSync(provenanceFile, "utf8"), /^execution_id,executed_at,/)

        const conversationsFile = join(dir, "conversations.csv")
        assert.strictEqual((yield* cli("export", "conversations", "--out", conversationsFile)).code, 0)
        const rows: Array<Record<string, string>> = parse(readFileSync(conversationsFile, "utf8"), {
          columns: true,
          record_delimiter: "\r\n"
        })
        assert.deepInclude(rows[0], {
          role: "user",
          content: "hello, \"cli\"",
          author: "API key =cli key",
          space_code: "cli"
        })
        const metrics = yield* cli("export", "metrics")
        assert.strictEqual(metrics.code, 0, metrics.stderr)
        assert.match(
          metrics.stdout,
          /^date,space_id,space_code,chats,messages,tokens_input,tokens_output,actions_succeeded,actions_failed\r\n/
        )
        const badDate = yield* cli("export", "metrics", "--from", "2025-02-30")
        assert.strictEqual(badDate.code, 1)
        assert.match(badDate.stderr, /^error: .*2025-02-30/)

        const roiFile = join(dir, "roi.html")
        assert.strictEqual((yield* cli("report", "roi", "--days", "7", "--out", roiFile)).code, 0)
        assert.match(readFileSync(roiFile, "utf8"), /^<!DOCTYPE html>[\s\S]*<svg[\s\S]*<\/html>\n$/)

        const listed = yield* cli("corrections", "list", "--agent", agent.id, "--json")
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.deepStrictEqual(JSON.parse(listed.stdout), { corrections: [] })

        const clean = yield* cli("compliance", "integrity")
        assert.strictEqual(clean.code, 0, clean.stderr)
        assert.match(clean.stdout, /Both chains verify/)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<
          { id: string }
        >`SELECT id FROM admin_audit_log WHERE event = 'space.created' ORDER BY seq DESC LIMIT 1`
        yield* sql`UPDATE admin_audit_log SET data = jsonb_set(data, '{name}', '"x"') WHERE id = ${row.id}`
        const broken = yield* cli("compliance", "integrity")
        assert.strictEqual(broken.code, 1)
        assert.include(broken.stderr, row.id)
      }),
    cliTimeout
  )

  it.effect(
    "a download that gets no answer says so in one line, as every command does, within --timeout",
    () =>
      Effect.gen(function*() {
        const user = yield* signedInAdmin
        // The stored session, moved to a URL that refuses connections, then to one that never answers.
        const movedTo = (url: string) =>
          writeFileSync(user.configFile, JSON.stringify({ ...storedSession(user.configFile), url }))
        const refusing = `http://127.0.0.1:${yield* closedPort}`
        movedTo(refusing)
        const refused = yield* user.run("export", "metrics")
        assert.strictEqual(refused.code, 1)
        assert.strictEqual(refused.stderr, `error: cannot reach ${refusing}: is the service running?\n`)

        const silent = yield* localServer(() => "hang")
        movedTo(silent.url)
        const late = yield* user.run("--timeout", "0.5", "compliance", "export")
        assert.strictEqual(late.code, 1)
        assert.strictEqual(
          late.stderr,
          `error: no answer from ${silent.url} within 0.5 s: the service may be overloaded or stuck; try again, or wait longer with --timeout SECONDS\n`
        )
      }).pipe(Effect.scoped),
    cliTimeout
  )

  it.effect(
    "export conversations --space takes the space's code or id, as every --space does",
    () =>
      Effect.gen(function*() {
        const code = `export-${crypto.randomUUID().slice(0, 8)}`
        const { space } = yield* spaceWithChat(code)
        yield* spaceWithChat(`other-${crypto.randomUUID().slice(0, 8)}`)
        const admin = yield* signedInAdmin
        for (const ref of [code, space.id]) {
          const exported = yield* admin.run("export", "conversations", "--space", ref)
          assert.strictEqual(exported.code, 0, exported.stderr)
          const rows: Array<Record<string, string>> = parse(exported.stdout, {
            columns: true,
            record_delimiter: "\r\n"
          })
          assert.isAbove(rows.length, 0)
          assert.deepStrictEqual([...new Set(rows.map((row) => row.space_code))], [code])
        }
        const unknown = yield* admin.run("export", "conversations", "--space", "no-such-space")
        assert.strictEqual(unknown.code, 1)
        assert.strictEqual(
          unknown.stderr,
          "error: space no-such-space not found: `agent-platform spaces list` shows them\n"
        )
      }),
    cliTimeout
  )

  it.effect(
    "corrections list --agent takes the agent's name or id; below Space Admin, its id",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const admin = yield* server.admin
        yield* admin.api.admin.updateFlags({ payload: { feature_decision_records: true } })
        const code = `corr-${crypto.randomUUID().slice(0, 8)}`
        const { agent } = yield* spaceWithChat(code)
        const cli = yield* signedInAdmin
        for (const ref of [agent.name, agent.id]) {
          assert.deepStrictEqual(yield* cli.runJson("corrections", "list", "--agent", ref), { corrections: [] })
        }
        const unknown = yield* cli.run("corrections", "list", "--agent", "Nobody")
        assert.strictEqual(unknown.stderr, "error: agent Nobody not found: `agent-platform agents list` shows them\n")

        const email = `${code}@example.com`
        const password = "Corrections-Reader-9"
        yield* admin.api.admin.createUser({ payload: { email, nombre: "Reader", password, role_id: "r_user" } })
        const user = yield* cliUser
        assert.strictEqual((yield* user.login(email, password)).code, 0)
        assert.deepStrictEqual(yield* user.runJson("corrections", "list", "--agent", agent.id), { corrections: [] })
        const byName = yield* user.run("corrections", "list", "--agent", agent.name)
        assert.strictEqual(byName.code, 1)
        assert.strictEqual(
          byName.stderr,
          `error: cannot look up the agent named ${agent.name}: listing agents takes an administrator or a Space Admin; give its id\n`
        )
      }),
    cliTimeout
  )

  it.effect(
    "a feature that is off names the CLI command that turns it on, not the HTTP route",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const admin = yield* server.admin
        const before = yield* admin.api.admin.getFlags()
        yield* admin.api.admin.updateFlags({ payload: { feature_compliance_pack: false, feature_war_rooms: false } })
        const cli = yield* signedInAdmin
        const integrity = yield* cli.run("compliance", "integrity")
        const exported = yield* cli.run("compliance", "export")
        const rooms = yield* cli.run("rooms", "list")
        yield* admin.api.admin.updateFlags({ payload: before })
        for (const refused of [integrity, exported]) {
          assert.strictEqual(refused.code, 1)
          assert.strictEqual(
            refused.stderr,
            "error: The compliance pack is off for this tenant: an administrator can turn it on with `agent-platform flags set feature_compliance_pack=on`.\n"
          )
        }
        assert.strictEqual(
          rooms.stderr,
          "error: Work rooms are off for this tenant (flag feature_war_rooms): an administrator can turn it on with `agent-platform flags set feature_war_rooms=on`.\n"
        )
      }),
    cliTimeout
  )
})
