/**
 * Chat (spec: POST /v1/chat/completions, "Events", chat history, usage) with
 * the embedded models on the test database: the router's choice, answers
 * grounded in ingested documents (and honest ignorance), the slot-filling
 * conversation ending in an executed action, the confirmation turn of an
 * action that requires it, a client going away mid-stream, errors after the
 * stream started, and usage counts. Actions run against a real local HTTP
 * server through a test implementation of ChatActions.
 */
import type { Actions, Chat, KeyPrincipal } from "@agent-platform/domain"
import { Errors } from "@agent-platform/domain"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as SqlClient from "effect/sql/SqlClient"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as EmbeddedLanguageModel from "../src/Ai/EmbeddedLanguageModel.ts"
import * as HashingEmbedder from "../src/Ai/HashingEmbedder.ts"
import * as OpenAiLanguageModel from "../src/Ai/OpenAiLanguageModel.ts"
import { type ChatAction, type ChatActionExecution, ChatActions } from "../src/Chat/ChatActions.ts"
import { ChatEngine, type SendInput } from "../src/Chat/ChatEngine.ts"
import { ChatHistory } from "../src/Chat/ChatHistory.ts"
import { ChatLive } from "../src/Chat/ChatLive.ts"
import { Router } from "../src/Chat/Router.ts"
import { UsageReport } from "../src/Chat/UsageReport.ts"
import { IngestionQueue } from "../src/Knowledge/IngestionQueue.ts"
import { KnowledgeFiles } from "../src/Knowledge/KnowledgeFiles.ts"
import { KnowledgeLive } from "../src/Knowledge/KnowledgeLive.ts"
import { shippingGuide } from "./Documents.ts"
import { layer as testServer, serverSuite } from "./TestServer.ts"

// ---------------------------------------------------------------------------
// Actions: a local HTTP server plays the remote systems; the test ChatActions
// lists the catalog from the database and POSTs the params to the action's URL.

interface Received {
  readonly path: string
  readonly body: unknown
}

const remote = Effect.acquireRelease(
  Effect.callback<{ server: ReturnType<typeof createServer>; received: Array<Received> }>((resume) => {
    const received: Array<Received> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null")
        received.push({ path: req.url ?? "", body })
        if (req.url === "/broken") {
          return res.writeHead(500, { "content-type": "application/json" }).end("{\"error\":\"db down\"}")
        }
        res.writeHead(201, { "content-type": "application/json" }).end(
          JSON.stringify({ ticket_id: `T-${received.length}`, status: "open" })
        )
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, received })))
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
).pipe(
  Effect.map(({ server, received }) => ({
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }))
)

class Remote
  extends Context.Service<Remote, { readonly received: Array<Received>; readonly url: string }>()("test/Remote")
{
  static readonly layer = Layer.effect(Remote, remote)
}

/** What the test ChatActions was asked to run. */
const executions: Array<ChatActionExecution> = []

const TestChatActions = Layer.effect(
  ChatActions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return ChatActions.of({
      listForAgent: ({ tenantId, agentId }) =>
        Effect.map(
          sql<
            {
              id: string
              name: string
              description: string
              parameters: Array<Actions.ActionParameter>
              requires_confirmation: boolean
            }
          >`
            SELECT a.id, a.name, a.description, a.parameters, a.requires_confirmation
            FROM actions a JOIN agent_actions aa ON aa.action_id = a.id
            WHERE a.tenant_id = ${tenantId} AND aa.agent_id = ${agentId} AND a.is_active ORDER BY a.name`,
          (rows) => rows.map((row): ChatAction => ({ ...row, requiresConfirmation: row.requires_confirmation }))
        ),
      execute: (input) =>
        Effect.gen(function*() {
          executions.push(input)
          const [action] = yield* sql<{ name: string; url: string }>`
            SELECT name, url FROM actions WHERE tenant_id = ${input.tenantId} AND id = ${input.actionId}`.pipe(
            Effect.orDie
          )
          if (action === undefined) return yield* new Errors.NotFound({ error: "action not found" })
          const response = yield* Effect.promise(() =>
            fetch(action.url, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(input.params)
            })
          )
          const body: unknown = yield* Effect.promise(() => response.json())
          yield* sql`
            INSERT INTO action_executions (tenant_id, action_id, action_name, caller_kind, caller_id, params_digest,
              status_code, success, duration_ms, supervision, chat_id, confirmation_text, trigger_type, trigger_id)
            VALUES (${input.tenantId}, ${input.actionId}, ${action.name}, 'key', 'test', 'digest', ${response.status},
              ${response.ok}, 1, ${
            input.confirmation === undefined ? "human_triggered_auto" : "human_confirmed"
          }, ${input.chatId},
              ${input.confirmation?.text ?? null}, 'agent', ${input.agentId})`.pipe(Effect.orDie)
          const result = {
            success: response.ok,
            status_code: response.status,
            action_id: input.actionId,
            action_name: action.name
          }
          if (!response.ok) {
            return yield* new (yield* Effect.promise(() => import("@agent-platform/domain"))).Actions.ActionFailed({
              ...result,
              response: JSON.stringify(body),
              error: `the remote system answered HTTP ${response.status}`
            })
          }
          return { ...result, response: body, error: null }
        })
    })
  })
)

// Layer.fresh: the test server already built the app's ChatLive (with the real actions and models);
// these tests need one built over their own.
const ChatStack = Layer.fresh(ChatLive).pipe(
  Layer.provideMerge(KnowledgeLive),
  Layer.provideMerge(Layer.mergeAll(TestChatActions, EmbeddedLanguageModel.layer, HashingEmbedder.layer, Remote.layer))
)

// ---------------------------------------------------------------------------
// Fixtures

interface World {
  readonly tenantId: string
  readonly spaceId: string
  readonly spaceCode: string
  readonly caller: KeyPrincipal
  readonly agent: (
    name: string,
    summary: string,
    options?: { primary?: boolean }
  ) => Effect.Effect<string, never, SqlClient.SqlClient>
}

/** A fresh tenant with one space and an API key, so tests never see each other's data. */
const world = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [tenant] = yield* sql<
    { id: string }
  >`INSERT INTO tenants (name) VALUES (${`t-${crypto.randomUUID()}`}) RETURNING id`
  const spaceCode = `sp-${crypto.randomUUID().slice(0, 8)}`
  const [space] = yield* sql<{ id: string }>`
    INSERT INTO spaces (tenant_id, code, name) VALUES (${tenant.id}, ${spaceCode}, 'Support') RETURNING id`
  const [key] = yield* sql<{ id: string }>`
    INSERT INTO api_keys (tenant_id, name, key_prefix, key_hash, scopes)
    VALUES (${tenant.id}, 'widget', 'sk_live_test', ${crypto.randomUUID()}, ${["chat"]}::text[]) RETURNING id`
  const caller: KeyPrincipal = {
    _tag: "Key",
    tenantId: tenant.id,
    keyId: key.id,
    scopes: ["chat"],
    spaceId: null,
    rateLimitRpm: 300,
    ownerRole: "r_admin",
    ownerId: crypto.randomUUID()
  }
  const agent = (name: string, summary: string, options: { primary?: boolean } = {}) =>
    Effect.map(
      sql<{ id: string }>`
        INSERT INTO agents (tenant_id, space_id, name, summary, is_primary)
        VALUES (${tenant.id}, ${space.id}, ${name}, ${summary}, ${options.primary ?? false}) RETURNING id`,
      (rows) => rows[0].id
    ).pipe(Effect.orDie)
  return { tenantId: tenant.id, spaceId: space.id, spaceCode, caller, agent } satisfies World
}).pipe(Effect.orDie)

const addAction = (
  w: World,
  agentId: string,
  action: {
    name: string
    description: string
    path: string
    parameters: Array<Actions.ActionParameter>
    requiresConfirmation?: boolean
  }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { url } = yield* Remote
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO actions (tenant_id, name, description, http_method, url, parameters, hitl_mode)
      VALUES (${w.tenantId}, ${action.name}, ${action.description}, 'POST', ${url + action.path},
              ${JSON.stringify(action.parameters)}::jsonb, ${action.requiresConfirmation === true ? "confirm" : "auto"})
      RETURNING id`
    yield* sql`INSERT INTO agent_actions (agent_id, action_id) VALUES (${agentId}, ${row.id})`
    return row.id
  }).pipe(Effect.orDie)

const ingestReady = (w: World, agentId: string, filename: string, content: string) =>
  Effect.gen(function*() {
    const files = yield* KnowledgeFiles
    const queue = yield* IngestionQueue
    yield* files.ingest({ tenantId: w.tenantId, agentId, filename, content })
    while ((yield* queue.processDue).claimed > 0) {}
  }).pipe(Effect.orDie)

/** Sends a message and collects the whole stream. */
const chat = (input: SendInput) =>
  Effect.gen(function*() {
    const engine = yield* ChatEngine
    const turn = yield* engine.send(input)
    const events = yield* Stream.runCollect(turn.events)
    return { turn, events, text: textOf(events) }
  })

const textOf = (events: ReadonlyArray<Chat.ChatEvent>) => events.flatMap((e) => ("text" in e ? [e.text] : [])).join("")
const ofType = (events: ReadonlyArray<Chat.ChatEvent>, type: string) =>
  events.filter((e) => "type" in e && e.type === type)
const components = (events: ReadonlyArray<Chat.ChatEvent>, name: string) =>
  events.flatMap((e) => ("type" in e && e.type === "component" && e.component_name === name ? [e.props] : []))

const refundPolicy = [
  "# Returns and refunds",
  "",
  "Customers may return any unused item within 30 days of delivery. Items must be in their original packaging.",
  "",
  "Refunds are processed within 14 business days after the returned item reaches our warehouse.",
  "",
  "Damaged items are replaced free of charge when a photo of the damage is sent within 48 hours."
].join("\n")

const handbook = `# Employee Handbook

## Working hours
Our core working hours are from 10 am to 4 pm, Monday to Friday. Employees may start between 7 am and 10 am.
Overtime must be approved in advance by your manager.

## Vacation
Full-time employees receive 25 days of paid vacation per year. Vacation requests must be submitted at least two weeks in advance through the HR portal.
Unused vacation days can be carried over until March 31 of the following year.

## Sick leave
If you are sick, notify your manager before 9 am. A doctor's note is required for absences longer than three days.

## Expenses
Travel expenses are reimbursed within 30 days of submitting receipts. Meals during business trips are covered up to 50 euros per day.
Expense reports are submitted in the finance tool called Spendly.

## IT and security
Passwords must be changed every 90 days. Report lost laptops to the IT helpdesk at extension 4242 immediately.
The VPN is mandatory when working from public networks.

## Parental leave
Parents are entitled to 16 weeks of paid parental leave. Leave can be split into two blocks within the first year.`

const ticketAction = {
  name: "create_ticket",
  description: "Create a support ticket",
  path: "/tickets",
  parameters: [
    { name: "title", type: "string" as const, description: "What is wrong", required: true },
    { name: "priority", type: "string" as const, description: "low, normal or high", required: true },
    { name: "notes", type: "string" as const, description: "Anything else", required: false }
  ]
}

// ---------------------------------------------------------------------------

// ROLE api: no background ingestion worker races the batches these tests run themselves.
layer(Layer.provideMerge(ChatStack, testServer({ ROLE: "api" })), serverSuite)("Chat with the embedded model", (it) => {
  describe("routing", () => {
    it.effect("a mention by name picks that agent, else the best match of summaries and knowledge, else the primary", () =>
      Effect.gen(function*() {
        const router = yield* Router
        const sql = yield* SqlClient.SqlClient
        const w = yield* world
        const primary = yield* w.agent("Front Desk", "General questions and greetings", { primary: true })
        const billing = yield* w.agent("Billing", "Invoices, payments, refunds and returns")
        const shipping = yield* w.agent("Shipping Desk", "Deliveries and parcels")
        yield* ingestReady(w, shipping, "shipping.md", shippingGuide)
        const agents = yield* sql<any>`
          SELECT id, space_id, name, summary, instructions, is_primary, always_on FROM agents WHERE space_id = ${w.spaceId}`
        const route = (message: string) => router.route({ tenantId: w.tenantId, agents, message })

        const mention = yield* route("@Billing can you check my delivery?")
        assert.deepStrictEqual([mention.agent.id, mention.reason], [billing, "mention"])
        const byName = yield* route("I'd like to ask the shipping desk something about refunds")
        assert.deepStrictEqual([byName.agent.id, byName.reason], [shipping, "mention"])

        const bySummary = yield* route("I need a copy of my invoices and payments")
        assert.deepStrictEqual([bySummary.agent.id, bySummary.reason], [billing, "match"])
        const byKnowledge = yield* route("Who pays the customs fees for international parcels?")
        assert.deepStrictEqual([byKnowledge.agent.id, byKnowledge.reason], [shipping, "match"])

        const fallback = yield* route("Good morning, what a lovely day")
        assert.deepStrictEqual([fallback.agent.id, fallback.reason], [primary, "primary"])
      }))

    it.effect("a new chat is routed, reports its agent first, and keeps it for the next messages", () =>
      Effect.gen(function*() {
        const w = yield* world
        yield* w.agent("Front Desk", "General questions", { primary: true })
        const shipping = yield* w.agent("Shipping Desk", "Deliveries, parcels, shipping and customs")
        yield* ingestReady(w, shipping, "shipping.md", shippingGuide)
        const first = yield* chat({ caller: w.caller, message: "How long does standard shipping take?" })
        assert.deepStrictEqual(first.events[0], {
          type: "agent_info",
          agent_id: shipping,
          agent_name: "Shipping Desk",
          chat_id: first.turn.chatId
        })
        const second = yield* chat({ caller: w.caller, chatId: first.turn.chatId, message: "thanks!" })
        assert.strictEqual(second.turn.agentId, shipping)
        assert.strictEqual(second.turn.chatId, first.turn.chatId)
      }))
  })

  describe("answers from knowledge", () => {
    it.effect("answers a question from the ingested document, citing the file, and stores both messages", () =>
      Effect.gen(function*() {
        const w = yield* world
        const agent = yield* w.agent("Helper", "Store policies", { primary: true })
        yield* ingestReady(w, agent, "refunds.md", refundPolicy)
        yield* ingestReady(w, agent, "shipping.md", shippingGuide)
        const { turn, events, text } = yield* chat({
          caller: w.caller,
          space: w.spaceCode,
          message: "How long does it take to get my refund?"
        })
        assert.strictEqual(ofType(events, "agent_info").length, 1)
        assert.isAbove(events.filter((e) => "text" in e).length, 5, "the answer streams as several tokens")
        assert.include(text, "14 business days")
        assert.include(text, "refunds.md")
        assert.notInclude(text, "shipping.md")
        assert.deepStrictEqual(ofType(events, "error"), [])

        const history = yield* (yield* ChatHistory).read({ caller: w.caller, chatId: turn.chatId })
        assert.strictEqual(history.chat_id, turn.chatId)
        assert.deepStrictEqual(history.messages.map((m) => [m.role, m.content, m.agent_id]), [
          ["user", "How long does it take to get my refund?", undefined],
          ["agent", text, agent]
        ])
        const sql = yield* SqlClient.SqlClient
        const [tokens] = yield* sql<{ input: number; output: number }>`
          SELECT tokens_input AS input, tokens_output AS output FROM chat_messages WHERE chat_id = ${turn.chatId} AND role = 'agent'`
        assert.isAbove(tokens.input, tokens.output)
        assert.isAbove(tokens.output, 5)
      }))

    it.effect("finds the answers spread over a longer handbook", () =>
      Effect.gen(function*() {
        const w = yield* world
        const agent = yield* w.agent("HR", "Employee questions", { primary: true })
        yield* ingestReady(w, agent, "handbook.md", handbook)
        const answers: Array<[question: string, answer: string]> = [
          ["How many vacation days do I get?", "Full-time employees receive 25 days of paid vacation per year."],
          ["When do I have to notify my manager if I'm sick?", "If you are sick, notify your manager before 9 am."],
          [
            "How long does reimbursement of travel expenses take?",
            "Travel expenses are reimbursed within 30 days of submitting receipts."
          ],
          ["How often must passwords be changed?", "Passwords must be changed every 90 days."],
          ["How long is parental leave?", "Parents are entitled to 16 weeks of paid parental leave."],
          ["What are the core hours?", "Our core working hours are from 10 am to 4 pm, Monday to Friday."],
          ["Where do I submit expense reports?", "Expense reports are submitted in the finance tool called Spendly."]
        ]
        for (const [question, answer] of answers) {
          const { text } = yield* chat({ caller: w.caller, message: question })
          assert.include(text, answer, question)
          assert.match(text, /^According to handbook\.md: /)
        }
        for (const question of ["What is the dress code?", "What's the wifi password?", "Do we have a pension plan?"]) {
          assert.match((yield* chat({ caller: w.caller, message: question })).text, /^I don't know/, question)
        }
      }))

    it.effect("says plainly that it does not know when nothing relevant was ingested", () =>
      Effect.gen(function*() {
        const w = yield* world
        const agent = yield* w.agent("Helper", "Store policies", { primary: true })
        yield* ingestReady(w, agent, "refunds.md", refundPolicy)
        const { text } = yield* chat({ caller: w.caller, message: "What is the capital of Mongolia?" })
        assert.match(text, /^I don't know/)
        assert.notInclude(text, "refunds.md")
        const vacation = yield* chat({ caller: w.caller, message: "What is the vacation policy for employees?" })
        assert.match(vacation.text, /^I don't know/)
      }))

    it.effect("answers 404 before streaming for an unknown chat, another tenant's chat, or an unknown space", () =>
      Effect.gen(function*() {
        const engine = yield* ChatEngine
        const w = yield* world
        yield* w.agent("Helper", "", { primary: true })
        const other = yield* world
        yield* other.agent("Other", "", { primary: true })
        const theirs = yield* chat({ caller: other.caller, message: "hello" })
        for (
          const input of [
            { caller: w.caller, chatId: crypto.randomUUID(), message: "hi" },
            { caller: w.caller, chatId: "not-a-chat", message: "hi" },
            { caller: w.caller, chatId: theirs.turn.chatId, message: "hi" },
            { caller: w.caller, space: "no-such-space", message: "hi" },
            { caller: w.caller, space: other.spaceCode, message: "hi" }
          ]
        ) {
          const error = yield* Effect.flip(engine.send(input))
          assert.strictEqual(error._tag, "NotFound")
        }
        const history = yield* Effect.flip((yield* ChatHistory).read({ caller: w.caller, chatId: theirs.turn.chatId }))
        assert.strictEqual(history._tag, "NotFound")

        // A key bound to a space chats there by default and sees nothing of the tenant's other spaces.
        const sql = yield* SqlClient.SqlClient
        const [lobby] = yield* sql<{ id: string }>`
          INSERT INTO spaces (tenant_id, code, name) VALUES (${w.tenantId}, 'lobby', 'Lobby') RETURNING id`
        const lobbyAgent = (yield* sql<{ id: string }>`
          INSERT INTO agents (tenant_id, space_id, name, is_primary) VALUES (${w.tenantId}, ${lobby.id}, 'Greeter', true) RETURNING id`)[
          0
        ].id
        const bound: KeyPrincipal = { ...w.caller, spaceId: lobby.id }
        const inLobby = yield* chat({ caller: bound, message: "hello" })
        assert.strictEqual(inLobby.turn.agentId, lobbyAgent)
        const elsewhere = yield* chat({ caller: w.caller, space: w.spaceCode, message: "hello" })
        assert.strictEqual(
          (yield* Effect.flip(engine.send({ caller: bound, space: w.spaceCode, message: "hi" })))._tag,
          "NotFound"
        )
        assert.strictEqual(
          (yield* Effect.flip(engine.send({ caller: bound, chatId: elsewhere.turn.chatId, message: "hi" })))._tag,
          "NotFound"
        )
        assert.strictEqual(
          (yield* Effect.flip((yield* ChatHistory).read({ caller: bound, chatId: elsewhere.turn.chatId })))._tag,
          "NotFound"
        )
      }))
  })

  describe("actions", () => {
    it.effect("asks for a missing parameter, then runs the action with both turns' parameters", () =>
      Effect.gen(function*() {
        const w = yield* world
        const agent = yield* w.agent("Helper", "IT support", { primary: true })
        const actionId = yield* addAction(w, agent, ticketAction)
        const { received } = yield* Remote
        const before = received.length

        const first = yield* chat({
          caller: w.caller,
          message: "Please create a ticket with title: Printer on floor 3 is broken"
        })
        assert.deepStrictEqual(ofType(first.events, "system_alert"), [])
        const [form] = components(first.events, "parameter_form")
        assert.deepInclude(form, {
          action_id: actionId,
          action_name: "create_ticket",
          missing: ["priority"],
          asking: "priority"
        })
        assert.deepInclude((form.fields as Array<unknown>)[0] as object, {
          name: "title",
          value: "Printer on floor 3 is broken"
        })
        assert.match(first.text, /priority \(low, normal or high\)\. What should it be\?$/)
        assert.strictEqual(received.length, before, "nothing runs while a parameter is missing")

        const second = yield* chat({ caller: w.caller, chatId: first.turn.chatId, message: "high" })
        assert.deepStrictEqual(ofType(second.events, "system_alert"), [{
          type: "system_alert",
          data: { action_id: actionId, action_name: "create_ticket", success: true, status_code: 201 }
        }])
        const [card] = components(second.events, "action_result")
        assert.deepInclude(card, {
          success: true,
          status_code: 201,
          action_id: actionId,
          action_name: "create_ticket",
          error: null
        })
        assert.deepStrictEqual(received.at(-1), {
          path: "/tickets",
          body: { title: "Printer on floor 3 is broken", priority: "high" }
        })
        assert.match(
          second.text,
          /^Done: create_ticket succeeded \(status 201\)\. Result: ticket_id: T-\d+, status: open\.$/
        )
        assert.deepInclude(executions.at(-1)!, { chatId: first.turn.chatId, agentId: agent })
        assert.isUndefined(executions.at(-1)!.confirmation)

        // The conversation is over: the next message is a new question, not a parameter.
        const third = yield* chat({ caller: w.caller, chatId: first.turn.chatId, message: "high" })
        assert.deepStrictEqual(ofType(third.events, "system_alert"), [])
      }))

    it.effect("runs at once when the message gives every required parameter, and reports a failure", () =>
      Effect.gen(function*() {
        const w = yield* world
        const agent = yield* w.agent("Helper", "IT support", { primary: true })
        yield* addAction(w, agent, {
          ...ticketAction,
          name: "open_incident",
          description: "Open an incident",
          path: "/broken"
        })
        const { events, text } = yield* chat({
          caller: w.caller,
          message: "open an incident, title: VPN down, priority: high"
        })
        assert.deepStrictEqual(ofType(events, "system_alert").map((e: any) => [e.data.success, e.data.status_code]), [[
          false,
          500
        ]])
        const [card] = components(events, "action_result")
        assert.deepInclude(card, { success: false, status_code: 500, error: "the remote system answered HTTP 500" })
        assert.match(text, /^The action open_incident failed \(status 500\): the remote system answered HTTP 500/)
      }))

    it.effect("an action that requires confirmation runs only after the user confirms, as human_confirmed", () =>
      Effect.gen(function*() {
        const w = yield* world
        const agent = yield* w.agent("Helper", "Orders", { primary: true })
        const actionId = yield* addAction(w, agent, {
          name: "refund_order",
          description: "Refund a customer's order",
          path: "/refunds",
          parameters: [{ name: "order_id", type: "integer", description: "The order number", required: true }],
          requiresConfirmation: true
        })
        const { received } = yield* Remote
        const before = received.length

        const ask = yield* chat({ caller: w.caller, message: "Please refund order 1234" })
        assert.deepStrictEqual(components(ask.events, "action_confirmation"), [{
          action_id: actionId,
          action_name: "refund_order",
          params: { order_id: 1234 },
          requires_confirmation: true
        }])
        assert.strictEqual(
          ask.text,
          "Please confirm: run refund_order with order_id: 1234? Reply \"yes\" to run it or \"no\" to cancel."
        )
        assert.deepStrictEqual(ofType(ask.events, "system_alert"), [])

        const unclear = yield* chat({ caller: w.caller, chatId: ask.turn.chatId, message: "hmm, what?" })
        assert.match(unclear.text, /Please reply "yes" to run refund_order/)
        assert.strictEqual(received.length, before)

        const confirmed = yield* chat({ caller: w.caller, chatId: ask.turn.chatId, message: "yes, go ahead" })
        assert.deepStrictEqual(ofType(confirmed.events, "system_alert").map((e: any) => e.data.success), [true])
        assert.deepStrictEqual(received.at(-1), { path: "/refunds", body: { order_id: 1234 } })
        const execution = executions.at(-1)!
        assert.deepStrictEqual(execution.confirmation, {
          text: "yes, go ahead",
          asked: "Please confirm: run refund_order with order_id: 1234? Reply \"yes\" to run it or \"no\" to cancel."
        })

        // Declining runs nothing.
        const again = yield* chat({ caller: w.caller, message: "refund order 77" })
        const declined = yield* chat({ caller: w.caller, chatId: again.turn.chatId, message: "no" })
        assert.strictEqual(declined.text, "Okay, I cancelled refund_order; nothing was run.")
        assert.notDeepInclude(received.map((r) => r.body), { order_id: 77 })
      }))
  })

  describe("streaming", () => {
    it.effect("a client that goes away mid-answer leaves the answer stored as far as it got", () =>
      Effect.gen(function*() {
        const engine = yield* ChatEngine
        const w = yield* world
        const agent = yield* w.agent("Helper", "Store policies", { primary: true })
        yield* ingestReady(w, agent, "refunds.md", refundPolicy)
        const question = "How long does it take to get my refund?"
        const full = (yield* chat({ caller: w.caller, message: question })).text

        const turn = yield* engine.send({ caller: w.caller, message: question })
        const received: Array<string> = []
        const third = yield* Deferred.make<void>()
        const client = yield* Effect.forkChild(Stream.runForEach(turn.events, (event) =>
          "text" in event
            ? Effect.gen(function*() {
              received.push(event.text)
              // The client stops reading after the third token, then disconnects.
              if (received.length === 3) yield* Deferred.succeed(third, undefined).pipe(Effect.andThen(Effect.never))
            })
            : Effect.void))
        yield* Deferred.await(third)
        yield* Fiber.interrupt(client)

        const history = yield* (yield* ChatHistory).read({ caller: w.caller, chatId: turn.chatId })
        assert.deepStrictEqual(history.messages.map((m) => m.role), ["user", "agent"])
        const stored = history.messages[1].content
        assert.isTrue(stored.startsWith(received.join("")), "stores what the client received")
        assert.isTrue(full.startsWith(stored), "a prefix of the full answer")
        assert.isBelow(stored.length, full.length)
      }))
  })

  describe("usage", () => {
    it.effect("counts messages, tokens and successful executions, in total and per space", () =>
      Effect.gen(function*() {
        const usage = yield* UsageReport
        const sql = yield* SqlClient.SqlClient
        const w = yield* world
        const agent = yield* w.agent("Helper", "IT support", { primary: true })
        yield* addAction(w, agent, ticketAction)
        const [second] = yield* sql<{ id: string }>`
          INSERT INTO spaces (tenant_id, code, name) VALUES (${w.tenantId}, 'quiet', 'Quiet') RETURNING id`

        const empty = yield* usage.report({ tenantId: w.tenantId, period: "24h" })
        assert.deepInclude(empty, {
          period: "24h",
          messages: 0,
          tokens: { input: 0, output: 0, total: 0 },
          successful_action_executions: 0
        })

        yield* chat({ caller: w.caller, message: "hello" })
        yield* chat({ caller: w.caller, message: "create a ticket, title: Screen flickers, priority: low" })
        const report = yield* usage.report({ tenantId: w.tenantId, period: "7d" })
        const [stored] = yield* sql<{ input: number; output: number }>`
          SELECT sum(tokens_input)::int AS input, sum(tokens_output)::int AS output FROM chat_messages WHERE tenant_id = ${w.tenantId}`
        assert.strictEqual(report.messages, 4)
        assert.deepStrictEqual(report.tokens, {
          input: stored.input,
          output: stored.output,
          total: stored.input + stored.output
        })
        assert.isAbove(report.tokens.output, 0)
        assert.strictEqual(report.successful_action_executions, 1)
        assert.strictEqual(Date.parse(report.to) - Date.parse(report.from), 7 * 24 * 3600 * 1000)
        assert.deepStrictEqual(report.by_space, [
          {
            space_id: w.spaceId,
            space_code: w.spaceCode,
            messages: 4,
            tokens: report.tokens,
            successful_action_executions: 1
          },
          {
            space_id: second.id,
            space_code: "quiet",
            messages: 0,
            tokens: { input: 0, output: 0, total: 0 },
            successful_action_executions: 0
          }
        ])
      }))
  })
})

// ---------------------------------------------------------------------------
// The same engine over an OpenAI-compatible provider: a scripted server on
// loopback that records what it is sent.

const sse = (chunks: ReadonlyArray<unknown>) =>
  chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n"
const choice = (delta: unknown, finish: string | null = null) => ({
  id: "c",
  model: "gpt-test",
  choices: [{ index: 0, delta, finish_reason: finish }]
})
const usageChunk = { id: "c", choices: [], usage: { prompt_tokens: 120, completion_tokens: 7 } }

/** Answers by the conversation's last message: a rejected key, a tool call, a report of a tool result, or an echo. */
const scripted = (body: any): { status: number; body: string } => {
  const messages: Array<any> = body.messages
  const last = messages.at(-1)
  if (last.role === "tool") {
    return {
      status: 200,
      body: sse([
        choice({ content: `Ticket ${JSON.parse(last.content).response.ticket_id} is open.` }),
        choice({}, "stop"),
        usageChunk
      ])
    }
  }
  const text = String(last.content)
  if (text.includes("fail")) {
    return { status: 401, body: JSON.stringify({ error: { message: "Incorrect API key provided" } }) }
  }
  if (text.includes("ticket")) {
    return {
      status: 200,
      body: sse([
        choice({ content: "Sure. " }),
        choice({
          tool_calls: [{
            index: 0,
            id: "call_7",
            type: "function",
            function: { name: "create_ticket", arguments: "{\"title\":\"Printer broken\"}" }
          }]
        }),
        choice({}, "tool_calls"),
        usageChunk
      ])
    }
  }
  return {
    status: 200,
    body: sse([choice({ content: "You said: " }), choice({ content: text }), choice({}, "stop"), usageChunk])
  }
}

class Provider extends Context.Service<Provider, { readonly requests: Array<any> }>()("test/Provider") {}

const ProviderModel = Layer.unwrap(Effect.gen(function*() {
  const requests: Array<any> = []
  const server = yield* Effect.acquireRelease(
    Effect.callback<ReturnType<typeof createServer>>((resume) => {
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
          requests.push(body)
          const answer = scripted(body)
          res.writeHead(answer.status, {
            "content-type": answer.status === 200 ? "text/event-stream" : "application/json"
          }).end(answer.body)
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )
  return Layer.merge(
    OpenAiLanguageModel.layer({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      apiKey: Option.none(),
      model: "gpt-test",
      embeddingModel: "embed-test"
    }).pipe(Layer.provide(FetchHttpClient.layer)),
    Layer.succeed(Provider, { requests })
  )
}))

layer(
  Layer.provideMerge(
    Layer.fresh(ChatLive).pipe(
      Layer.provideMerge(Layer.fresh(KnowledgeLive)),
      Layer.provideMerge(Layer.mergeAll(TestChatActions, ProviderModel, HashingEmbedder.layer, Remote.layer))
    ),
    testServer()
  ),
  serverSuite
)("Chat over an OpenAI-compatible provider", (it) => {
  it.effect("history seeds a new chat's context without being stored; the provider's token counts are", () =>
    Effect.gen(function*() {
      const { requests } = yield* Provider
      const w = yield* world
      yield* w.agent("Helper", "", { primary: true })
      const first = yield* chat({
        caller: w.caller,
        message: "What is my name?",
        history: [{ role: "user", content: "My name is Ada." }, {
          role: "assistant",
          content: "Nice to meet you, Ada."
        }]
      })
      assert.strictEqual(first.text, "You said: What is my name?")
      const sent = requests.at(-1).messages.map((m: any) => [m.role, m.content])
      assert.deepStrictEqual(sent.slice(1), [
        ["user", "My name is Ada."],
        ["assistant", "Nice to meet you, Ada."],
        ["user", "What is my name?"]
      ])
      assert.strictEqual(sent[0][0], "system")

      const second = yield* chat({ caller: w.caller, chatId: first.turn.chatId, message: "And again?" })
      assert.deepStrictEqual(requests.at(-1).messages.slice(1).map((m: any) => m.content), [
        "My name is Ada.",
        "Nice to meet you, Ada.",
        "What is my name?",
        "You said: What is my name?",
        "And again?"
      ])
      const history = yield* (yield* ChatHistory).read({ caller: w.caller, chatId: second.turn.chatId })
      assert.deepStrictEqual(history.messages.map((m) => m.content), [
        "What is my name?",
        "You said: What is my name?",
        "And again?",
        "You said: And again?"
      ])
      const sql = yield* SqlClient.SqlClient
      const tokens = yield* sql<{ input: number; output: number }>`
        SELECT tokens_input AS input, tokens_output AS output FROM chat_messages WHERE chat_id = ${first.turn.chatId} AND role = 'agent'`
      assert.deepStrictEqual(tokens.map((t) => [t.input, t.output]), [[120, 7], [120, 7]])
    }))

  it.effect("a hosted model's tool call goes through the same slot filling, and gets the result to report", () =>
    Effect.gen(function*() {
      const { requests } = yield* Provider
      const w = yield* world
      const agent = yield* w.agent("Helper", "IT support", { primary: true })
      const actionId = yield* addAction(w, agent, ticketAction)
      const first = yield* chat({ caller: w.caller, message: "open a ticket, the printer is broken" })
      assert.strictEqual(requests.at(-1).tools[0].function.name, "create_ticket")
      assert.deepInclude(components(first.events, "parameter_form")[0], { action_id: actionId, missing: ["priority"] })
      assert.match(first.text, /^Sure\. To run create_ticket I need the priority/)

      const asked = requests.length
      const second = yield* chat({ caller: w.caller, chatId: first.turn.chatId, message: "priority: high" })
      assert.deepStrictEqual(ofType(second.events, "system_alert").map((e: any) => e.data.status_code), [201])
      const { received } = yield* Remote
      assert.deepStrictEqual(received.at(-1)!.body, { title: "Printer broken", priority: "high" })
      // One model call: the report of the result, with the call and its result in the conversation.
      assert.strictEqual(requests.length, asked + 1)
      const [call, result] = requests.at(-1).messages.slice(-2)
      assert.strictEqual(call.tool_calls[0].function.name, "create_ticket")
      assert.deepInclude(JSON.parse(result.content), { success: true, status_code: 201 })
      assert.match(second.text, /^Ticket T-\d+ is open\.$/)
    }))

  it.effect("a provider failure after the stream started is an error event; the user message is kept", () =>
    Effect.gen(function*() {
      const w = yield* world
      const agent = yield* w.agent("Helper", "", { primary: true })
      const { turn, events } = yield* chat({ caller: w.caller, message: "please fail" })
      assert.deepStrictEqual(events, [
        { type: "agent_info", agent_id: agent, agent_name: "Helper", chat_id: turn.chatId },
        { type: "error", error: "The language model provider rejected the platform's credentials." }
      ])
      const history = yield* (yield* ChatHistory).read({ caller: w.caller, chatId: turn.chatId })
      assert.deepStrictEqual(history.messages.map((m) => [m.role, m.content]), [["user", "please fail"]])
    }))
})
