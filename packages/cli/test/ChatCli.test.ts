/**
 * `agent-platform chat` and `agent-platform knowledge`, the commands that act
 * as an API key: the CLI's program (run in-process, see CliProcess.ts) against
 * an in-process server whose space, agent and key are set up through the
 * admin SDK.
 */
import { Chat } from "@agent-platform/domain"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { ticketAction } from "../../server/test/Catalog.ts"
import { refundPolicy } from "../../server/test/Documents.ts"
import { jsonAnswer, localServer } from "../../server/test/LocalHttp.ts"
import { createKey, layer as testServer, secondTenant, serverSuite, TestServer } from "../../server/test/TestServer.ts"
import * as ChatTranscript from "../src/ChatTranscript.ts"
import { run, temporaryDirectory } from "./CliProcess.ts"

const noKey =
  "error: no API key: pass --key sk_live_... or set AGENT_PLATFORM_API_KEY (create one with `agent-platform keys create`)\n"

/**
 * A space with a primary support agent, a key bound to it (chat and files),
 * a directory for documents, and the CLI pointed at the server: `run` passes
 * the key in `AGENT_PLATFORM_API_KEY`, `runWithoutKey` passes none.
 */
const world = Effect.gen(function*() {
  const server = yield* TestServer
  const admin = yield* server.admin
  const code = `space-${crypto.randomUUID().slice(0, 8)}`
  const space = yield* admin.api.admin.createSpace({ payload: { code, name: code } })
  const support = yield* admin.api.agentsAdmin.create({
    payload: {
      space_id: space.id,
      name: "Support",
      summary: "Customer support: orders, returns and refunds",
      is_primary: true
    }
  })
  const { key } = yield* createKey(["chat", "files"], { space_id: space.id, rate_limit_rpm: 10_000 })
  const keyClient = yield* server.client({ apiKey: key })
  const dir = yield* temporaryDirectory
  const file = (name: string, content: string | Uint8Array) => {
    const path = join(dir, name)
    writeFileSync(path, content)
    return path
  }
  const base = { AGENT_PLATFORM_URL: server.baseUrl, AGENT_PLATFORM_CONFIG: join(dir, "config.json") }
  return {
    admin,
    space,
    support,
    key,
    keyClient,
    dir,
    file,
    run: (args: ReadonlyArray<string>, options: { readonly stdin?: string } = {}) =>
      run(args, { ...base, AGENT_PLATFORM_API_KEY: key }, options),
    runWithoutKey: (args: ReadonlyArray<string>) => run(args, base)
  }
}).pipe(Effect.orDie)

/** The lines of `--json` chat output, each decoded as a chat event. */
const events = (stdout: string): ReadonlyArray<Chat.ChatEvent> =>
  stdout.trimEnd().split("\n").map((line) => Schema.decodeUnknownSync(Schema.fromJsonString(Chat.ChatEvent))(line))

const agentInfos = (list: ReadonlyArray<Chat.ChatEvent>) =>
  list.filter((event): event is typeof Chat.AgentInfoEvent.Type => "type" in event && event.type === "agent_info")

layer(testServer({ CRON_INTERVAL_MS: "500" }), serverSuite)("agent-platform knowledge and chat", (it) => {
  describe("knowledge ingest", () => {
    it.effect("follows the document to ready on one progress line; then chat answers from it, citing the file", () =>
      Effect.gen(function*() {
        const w = yield* world
        const path = w.file("refunds.md", refundPolicy)
        const ingested = yield* w.run(["knowledge", "ingest", path, "--agent", w.support.id])
        assert.strictEqual(ingested.code, 0, ingested.stderr)
        assert.strictEqual(ingested.stderr, "")
        const size = new TextEncoder().encode(refundPolicy).length
        assert.match(
          ingested.stdout,
          new RegExp(`^refunds\\.md: pending…( processing…)? ready \\(${size} bytes\\)\\n$`)
        )
        const { files } = yield* w.keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
        assert.deepInclude(files[0], { filename: "refunds.md", status: "ready", size_bytes: size })

        const answer = yield* w.run(["chat", "--message", "How long does it take to get my refund?"])
        assert.strictEqual(answer.code, 0, answer.stderr)
        assert.strictEqual(answer.stderr, "")
        assert.match(answer.stdout, /14 business days/)
        assert.include(answer.stdout, "refunds.md")
        assert.isTrue(answer.stdout.endsWith("\n"))
      }))

    it.effect("--key instead of the environment; --json prints the final file", () =>
      Effect.gen(function*() {
        const w = yield* world
        const path = w.file("hours.txt", "Our support desk is open from 8:00 to 18:00, Monday to Friday.")
        const result = yield* w.runWithoutKey([
          "knowledge",
          "ingest",
          path,
          "--agent",
          w.support.id,
          "--key",
          w.key,
          "--json"
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        const file = JSON.parse(result.stdout)
        const { files } = yield* w.keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
        assert.deepStrictEqual(file, files.find((f) => f.id === file.id))
        assert.strictEqual(file.status, "ready")
      }))

    it.effect("a document that ends failed: exit 1 with the pipeline's message", () =>
      Effect.gen(function*() {
        const w = yield* world
        const path = w.file("scan.txt", "page one\u0000\u0001 binary")
        const result = yield* w.run(["knowledge", "ingest", path, "--agent", w.support.id])
        assert.strictEqual(result.code, 1)
        assert.match(result.stdout, /^scan\.txt: pending…( processing…)? failed\n$/)
        const { files } = yield* w.keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
        const failed = files.find((f) => f.filename === "scan.txt")!
        assert.strictEqual(failed.status, "failed")
        assert.strictEqual(result.stderr, `error: scan.txt: ingestion failed: ${failed.error}\n`)
      }))

    it.effect("refuses, before sending anything, a file over 2 MiB or not UTF-8 text", () =>
      Effect.gen(function*() {
        const w = yield* world
        const big = w.file("big.md", "a".repeat(2 * 1024 * 1024 + 1))
        const tooBig = yield* w.run(["knowledge", "ingest", big, "--agent", w.support.id])
        assert.strictEqual(tooBig.code, 1)
        assert.strictEqual(
          tooBig.stderr,
          "error: big.md is 2,097,153 bytes: documents are limited to 2 MiB (2,097,152 bytes); split it into smaller files\n"
        )
        const latin1 = w.file("latin1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9]))
        const notText = yield* w.run(["knowledge", "ingest", latin1, "--agent", w.support.id])
        assert.strictEqual(notText.code, 1)
        assert.strictEqual(notText.stderr, "error: latin1.txt is not UTF-8 text: only text documents can be ingested\n")
        const missing = yield* w.run(["knowledge", "ingest", join(w.dir, "nope.md"), "--agent", w.support.id])
        assert.strictEqual(missing.code, 1)
        assert.match(missing.stderr, /^error: cannot read .*nope\.md: no such file\n$/)
        const { files } = yield* w.keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
        assert.deepStrictEqual(files, [])
      }))

    it.effect("an unknown agent: the server's 404 message", () =>
      Effect.gen(function*() {
        const w = yield* world
        const id = crypto.randomUUID()
        const result = yield* w.run(["knowledge", "ingest", w.file("a.md", "text"), "--agent", id])
        assert.strictEqual(result.code, 1)
        assert.strictEqual(result.stdout, "")
        assert.match(result.stderr, new RegExp(`^error: agent ${id} not found\\n$`))
      }))
  })

  describe("knowledge list and delete", () => {
    it.effect("list shows the agent's files as a table (--json: the API's body); delete removes one", () =>
      Effect.gen(function*() {
        const w = yield* world
        const accepted = yield* w.keyClient.api.knowledge.ingest({
          payload: { agent_id: w.support.id, filename: "refunds.md", content: refundPolicy }
        })
        const table = yield* w.run(["knowledge", "list", "--agent", w.support.id])
        assert.strictEqual(table.code, 0, table.stderr)
        const lines = table.stdout.trimEnd().split("\n")
        assert.match(lines[0], /^ID +FILENAME +STATUS +BYTES +AGENT +UPLOADED +ERROR$/)
        assert.match(
          lines[1],
          new RegExp(
            `^${accepted.file_id} +refunds\\.md +(pending|processing|ready) +\\d+ +${w.support.id} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d +-$`
          )
        )
        const json = yield* w.run(["knowledge", "list", "--agent", w.support.id, "--json"])
        const listed = yield* w.keyClient.api.knowledge.list({ query: { agent_id: w.support.id } })
        assert.deepStrictEqual(
          JSON.parse(json.stdout).files.map((f: { id: string }) => f.id),
          listed.files.map((f) => f.id)
        )

        const deleted = yield* w.run(["knowledge", "delete", accepted.file_id])
        assert.strictEqual(deleted.code, 0, deleted.stderr)
        assert.include(deleted.stdout, accepted.file_id)
        const empty = yield* w.run(["knowledge", "list", "--agent", w.support.id])
        assert.match(empty.stdout, /^No knowledge files yet/)
        const again = yield* w.run(["knowledge", "delete", accepted.file_id])
        assert.strictEqual(again.code, 1)
        assert.match(again.stderr, /^error: .*not found.*\n$/)
      }))
  })

  describe("knowledge --agent", () => {
    it.effect("names the agent by name or id, as every --agent does; a shared name asks for the id", () =>
      Effect.gen(function*() {
        const w = yield* world
        const name = `Refunds ${crypto.randomUUID().slice(0, 8)}`
        const refunds = yield* w.admin.api.agentsAdmin.create({
          payload: { space_id: w.space.id, name, summary: "Refunds", is_primary: false }
        })
        yield* w.admin.api.agentsAdmin.create({
          payload: { space_id: w.space.id, name: "Support", summary: "A second Support", is_primary: false }
        })
        const { key } = yield* createKey(["files", "agents:read"], { rate_limit_rpm: 10_000 })

        const ingested = yield* w.run([
          "knowledge",
          "ingest",
          w.file("refunds.md", refundPolicy),
          "--agent",
          name,
          "--key",
          key
        ])
        assert.strictEqual(ingested.code, 0, ingested.stderr)
        const listed = yield* w.run(["--json", "knowledge", "list", "--agent", name, "--key", key])
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.deepStrictEqual(
          JSON.parse(listed.stdout).files.map((f: { agent_id: string; filename: string }) => [f.agent_id, f.filename]),
          [[refunds.id, "refunds.md"]]
        )

        const shared = yield* w.run(["knowledge", "list", "--agent", "Support", "--key", key])
        assert.strictEqual(shared.code, 1)
        assert.match(
          shared.stderr,
          /^error: \d+ agents are named Support: give the id \(`agent-platform agents list` shows them\)\n$/
        )
        const unknown = yield* w.run(["knowledge", "list", "--agent", "Nobody", "--key", key])
        assert.strictEqual(unknown.code, 1)
        assert.strictEqual(unknown.stderr, "error: agent Nobody not found: `agent-platform agents list` shows them\n")
      }))

    it.effect("a key that may not list agents still takes an id, and says so for a name", () =>
      Effect.gen(function*() {
        const w = yield* world
        const byId = yield* w.run(["knowledge", "list", "--agent", w.support.id])
        assert.strictEqual(byId.code, 0, byId.stderr)
        const byName = yield* w.run(["knowledge", "list", "--agent", "Support"])
        assert.strictEqual(byName.code, 1)
        assert.strictEqual(
          byName.stderr,
          "error: cannot look up the agent named Support: the key may not list agents (that takes the scope agents:read or agents); give its id\n"
        )
      }))
  })

  describe("chat", () => {
    it.effect("piped lines are one chat: the second message continues it (same chat_id, one history)", () =>
      Effect.gen(function*() {
        const w = yield* world
        const result = yield* w.run(["chat", "--json"], {
          stdin: "hello there\nHow long does it take to get my refund?\n"
        })
        assert.strictEqual(result.code, 0, result.stderr)
        const list = events(result.stdout)
        const infos = agentInfos(list)
        assert.strictEqual(infos.length, 2)
        assert.strictEqual(infos[0].chat_id, infos[1].chat_id)
        assert.strictEqual(infos[0].agent_id, w.support.id)
        assert.deepInclude(list[0], { type: "agent_info", chat_id: infos[0].chat_id })
        const history = yield* w.keyClient.api.chat.history({ params: { chatId: infos[0].chat_id } })
        assert.deepStrictEqual(history.messages.map((m) => m.role), ["user", "agent", "user", "agent"])
        assert.strictEqual(history.messages[0].content, "hello there")
        assert.strictEqual(history.messages[2].content, "How long does it take to get my refund?")
      }))

    it.effect("shows a parameter form, then the action's alert, over two piped lines", () =>
      Effect.gen(function*() {
        const w = yield* world
        const target = yield* localServer(() => jsonAnswer(201, { ticket_id: "T-1", status: "open" }))
        const action = yield* w.admin.api.actionsAdmin.create({ payload: ticketAction(target.url) }).pipe(Effect.orDie)
        yield* w.admin.api.agentsAdmin.assignActions({
          params: { id: w.support.id },
          payload: { action_ids: [action.id] }
        }).pipe(
          Effect.orDie
        )
        const result = yield* w.run(["chat"], {
          stdin: "Please create a ticket with title: Printer on floor 3 is broken\n\nhigh\n"
        })
        assert.strictEqual(result.code, 0, result.stderr)
        assert.include(
          result.stdout,
          [
            "[form create_ticket: missing priority]",
            "  title*     = Printer on floor 3 is broken",
            "  priority*  ? low, normal or high"
          ].join("\n")
        )
        assert.match(result.stdout, /^\[action create_ticket: ok 201\]$/m)
        assert.match(result.stdout, /^\[result create_ticket: \{"ticket_id":"T-1","status":"open"\}\]$/m)
        assert.deepStrictEqual(JSON.parse(target.received[0].body), {
          title: "Printer on floor 3 is broken",
          priority: "high"
        })
      }))

    it.effect("errors are one line and exit 1: an unknown space, a refused key", () =>
      Effect.gen(function*() {
        const w = yield* world
        const space = yield* w.run(["chat", "--space", "nowhere", "--message", "hi"])
        assert.strictEqual(space.code, 1)
        assert.strictEqual(space.stdout, "")
        assert.strictEqual(
          space.stderr,
          "error: space nowhere not found: `agent-platform spaces list` shows the spaces; `agent-platform spaces create` and `agent-platform agents create` make one to chat in\n"
        )
        const refused = yield* w.runWithoutKey(["chat", "--key", "sk_live_not-a-key", "--message", "hi"])
        assert.strictEqual(refused.code, 1)
        assert.strictEqual(refused.stderr, "error: Invalid or revoked API key.\n")
        // A script stops at the first failure: one error line, not one per message.
        const piped = yield* run(["chat", "--key", "sk_live_not-a-key"], {
          AGENT_PLATFORM_URL: (yield* TestServer).baseUrl
        }, {
          stdin: "hi\nhello\n"
        })
        assert.strictEqual(piped.code, 1)
        assert.strictEqual(piped.stderr, "error: Invalid or revoked API key.\n")
      }))
  })

  describe("a tenant with nothing to chat with", () => {
    it.effect("says how to make a space and an agent, naming the commands", () =>
      Effect.gen(function*() {
        const other = yield* secondTenant()
        const created = yield* other.client.api.keys.create({ payload: { name: "lonely", scopes: ["chat"] } })
        const server = yield* TestServer
        const result = yield* run(["chat", "--message", "hi"], {
          AGENT_PLATFORM_URL: server.baseUrl,
          AGENT_PLATFORM_API_KEY: created.key
        })
        assert.strictEqual(result.code, 1)
        assert.strictEqual(
          result.stderr,
          "error: the tenant has no space to chat in: `agent-platform spaces list` shows the spaces; `agent-platform spaces create` and `agent-platform agents create` make one to chat in\n"
        )
      }))
  })

  describe("without an API key", () => {
    it.effect("every key command says how to give one, and exits 1", () =>
      Effect.gen(function*() {
        const w = yield* world
        const path = w.file("a.md", "text")
        const cases = [
          ["chat", "--message", "hi"],
          ["chat"],
          ["knowledge", "ingest", path, "--agent", w.support.id],
          ["knowledge", "list"],
          ["knowledge", "delete", crypto.randomUUID()]
        ]
        const results = yield* Effect.forEach(cases, w.runWithoutKey, { concurrency: "unbounded" })
        results.forEach((result, index) => {
          const args = cases[index].join(" ")
          assert.strictEqual(result.code, 1, args)
          assert.strictEqual(result.stderr, noKey, args)
          assert.strictEqual(result.stdout, "", args)
        })
      }))
  })
})

describe("ChatTranscript", () => {
  const showing = (list: ReadonlyArray<Chat.ChatEvent>, showAgent = false) => {
    let transcript = ChatTranscript.start({ showAgent })
    let text = ""
    for (const event of [...list]) {
      const rendered = ChatTranscript.render(transcript, event)
      text += rendered.text
      transcript = rendered.next
    }
    return text + ChatTranscript.end(transcript).text
  }
  const info = { type: "agent_info", agent_id: "a1", agent_name: "Support", chat_id: "c1" } as const

  it("writes tokens as they come and puts every other event on a line of its own", () => {
    const alert = {
      type: "system_alert",
      data: { action_id: "x", action_name: "create_ticket", success: false, status_code: 502 }
    } as const
    assert.strictEqual(
      showing([info, { text: "Done, " }, { text: "see below." }, alert, { text: "Sorry." }]),
      "Done, see below.\n[action create_ticket: failed 502]\nSorry.\n"
    )
  })

  it("names the agent at a terminal, and keeps control characters off it", () => {
    assert.strictEqual(showing([info, { text: "a\u001b[2Jb\r\nc" }], true), "Support: a?[2Jb\nc\n")
  })

  it("names the agent before its first token, after a form that comes first", () => {
    const form = {
      type: "component",
      component_name: "parameter_form",
      props: {
        action_id: "8a1f9a34-5f0e-4a8e-9d2b-3c0f4e1b7a11",
        action_name: "create_ticket",
        description: "Create a support ticket",
        fields: [{ name: "title", type: "string", description: "What is wrong", required: true, value: null }],
        missing: ["title"],
        asking: "title"
      }
    } as const
    assert.strictEqual(
      showing([info, form, { text: "What is wrong?" }], true),
      "[form create_ticket: missing title]\n  title*  ? What is wrong\nSupport: What is wrong?\n"
    )
  })

  it("names a component it cannot show", () => {
    assert.strictEqual(showing([{ type: "component", component_name: "map", props: {} }]), "[component map]\n")
  })
})
