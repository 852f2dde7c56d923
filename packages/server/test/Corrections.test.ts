/**
 * Decision records over HTTP (spec: corrections endpoints, rule 5, the
 * Decision record state row): filing a correction of an agent message, the
 * agent's list, accepting or rejecting once (409 after, also under
 * concurrency), the flag — and an accepted correction teaching the agent, so
 * the same question then gets the corrected answer from the embedded model.
 */
import * as Sdk from "@agent-platform/sdk"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { spaceWithAgent } from "./Catalog.ts"
import { refundPolicy } from "./Documents.ts"
import { eventually, newRoom, person, roomSpace, setRoomsFlag } from "./RoomsFixtures.ts"
import {
  createKey,
  http,
  json,
  layer as testServer,
  messageOf,
  serverSuite,
  sessionCookie,
  signIn,
  TestServer
} from "./TestServer.ts"

const password = "Correct-Horse-9"

const world = Effect.gen(function*() {
  const server = yield* TestServer
  const admin = yield* server.admin
  yield* admin.api.admin.updateFlags({ payload: { feature_decision_records: true } })
  const { agent, space } = yield* spaceWithAgent({ name: "Support", summary: "Returns and refunds" }, admin)
  const { key } = yield* createKey(["chat", "files"], { space_id: space.id, rate_limit_rpm: 10_000 })
  const keyClient = yield* server.client({ apiKey: key })
  return { server, admin, space, agent, key, keyClient }
}).pipe(Effect.orDie)

type World = Effect.Success<typeof world>

/** One chat turn over the key: the chat id and the answer's text. */
const ask = (w: World, message: string, chatId?: string) =>
  Effect.gen(function*() {
    let text = ""
    let id = chatId ?? ""
    const events = yield* Effect.promise(async () => {
      const out: Array<{ readonly text?: string; readonly type?: string; readonly chat_id?: string }> = []
      for await (
        const event of Sdk.chat({ baseUrl: w.server.baseUrl, apiKey: w.key }, {
          message,
          ...(chatId === undefined ? {} : { chat_id: chatId })
        })
      ) out.push(event)
      return out
    })
    for (const event of events) {
      if (typeof event.text === "string") text += event.text
      if (event.type === "agent_info" && event.chat_id !== undefined) id = event.chat_id
    }
    const history = yield* w.keyClient.api.chat.history({ params: { chatId: id } }).pipe(Effect.orDie)
    return { chatId: id, text, messages: history.messages }
  })

/** Polls the agent's knowledge until the file is ready. */
const waitReady = (w: World, fileId: string) =>
  Sdk.waitUntilReady(w.keyClient, { agentId: w.agent.id, fileId }, { timeout: "60 seconds" }).pipe(Effect.orDie)

layer(testServer({ CRON_INTERVAL_MS: "300" }), serverSuite)("decision records", (it) => {
  it.effect("an accepted correction teaches the agent: the same question then gets the corrected answer", () =>
    Effect.gen(function*() {
      const w = yield* world
      const file = yield* w.keyClient.api.knowledge.ingest({
        payload: { agent_id: w.agent.id, filename: "refunds.md", content: refundPolicy }
      })
      yield* waitReady(w, file.file_id)
      const question = "How long do refunds take?"
      const before = yield* ask(w, question)
      assert.match(before.text, /14 business days/)
      const answer = before.messages.at(-1)!
      assert.strictEqual(answer.role, "agent")

      const corrected = "Refunds are paid within 5 business days once the returned item is checked in."
      const created = yield* w.admin.api.corrections.create({
        params: { id: before.chatId },
        payload: { message_id: answer.id, corrected_output: corrected, reason: "Policy changed in March" }
      })
      assert.strictEqual(created.status, "open")
      const accepted = yield* w.admin.api.corrections.resolve({
        params: { id: created.id },
        payload: { status: "accepted" }
      })
      assert.strictEqual(accepted.status, "accepted")
      assert.isString(accepted.knowledge_file_id)
      yield* waitReady(w, accepted.knowledge_file_id!)

      const after = yield* ask(w, question)
      assert.include(after.text, corrected)
      assert.notInclude(after.text, "14 business days")
    }))

  it.effect("files an open record with original_output copied from the stored message; 404 and 400 as the rules say (a corrected_output of only white space too)", () =>
    Effect.gen(function*() {
      const w = yield* world
      const turn = yield* ask(w, "hello")
      const [userMessage, agentMessage] = turn.messages
      const cookie = yield* sessionCookie(w.admin)
      const forged = yield* http(
        `/api/chats/${turn.chatId}/corrections`,
        json("POST", {
          message_id: agentMessage.id,
          corrected_output: "Hello! How can I help?",
          original_output: "forged",
          tenant_id: crypto.randomUUID()
        }, { cookie })
      )
      assert.strictEqual(forged.status, 201)
      assert.deepStrictEqual(Object.keys(forged.body).sort(), ["id", "status"])
      const { corrections } = yield* w.admin.api.corrections.listForAgent({ params: { id: w.agent.id }, query: {} })
      const record = corrections.find((c) => c.id === forged.body.id)!
      assert.deepInclude(record, {
        chat_id: turn.chatId,
        message_id: agentMessage.id,
        agent_id: w.agent.id,
        original_output: agentMessage.content,
        corrected_output: "Hello! How can I help?",
        reason: null,
        status: "open",
        resolved_by: null,
        resolved_at: null,
        knowledge_file_id: null
      })
      const me = yield* w.admin.api.auth.me()
      assert.strictEqual(record.created_by, me.user_id)

      const fail = (chatId: string, body: unknown) =>
        http(`/api/chats/${chatId}/corrections`, json("POST", body, { cookie }))
      assert.strictEqual(
        (yield* fail(crypto.randomUUID(), { message_id: agentMessage.id, corrected_output: "x" })).status,
        404
      )
      assert.strictEqual(
        (yield* fail(turn.chatId, { message_id: crypto.randomUUID(), corrected_output: "x" })).status,
        404
      )
      assert.strictEqual(
        (yield* fail("not-a-chat", { message_id: agentMessage.id, corrected_output: "x" })).status,
        404
      )
      const notAgents = yield* fail(turn.chatId, { message_id: userMessage.id, corrected_output: "x" })
      assert.strictEqual(notAgents.status, 400)
      assert.match(notAgents.body.error, /agent's message/)
      const otherAgent = yield* fail(turn.chatId, {
        message_id: agentMessage.id,
        corrected_output: "x",
        agent_id: crypto.randomUUID()
      })
      assert.strictEqual(otherAgent.status, 400)
      assert.strictEqual((yield* fail(turn.chatId, { message_id: agentMessage.id, corrected_output: "" })).status, 400)
      for (const blank of ["   ", "\n\t "]) {
        const refused = yield* fail(turn.chatId, { message_id: agentMessage.id, corrected_output: blank })
        assert.strictEqual(refused.status, 400)
        assert.strictEqual(refused.body._tag, "InvalidRequest")
        assert.include(refused.body.error, "corrected_output")
        assert.include(refused.body.error, "white space")
      }
      assert.strictEqual((yield* fail(turn.chatId, { message_id: agentMessage.id })).status, 400)

      const unknownAgent = yield* w.admin.api.corrections.listForAgent({
        params: { id: crypto.randomUUID() },
        query: {}
      }).pipe(Effect.flip)
      assert.strictEqual(unknownAgent._tag, "NotFound")
      const open = yield* w.admin.api.corrections.listForAgent({
        params: { id: w.agent.id },
        query: { status: "accepted" }
      })
      assert.deepStrictEqual(open.corrections, [])
    }))

  it.effect("open → accepted or rejected once: every other transition is 409, also for concurrent administrators", () =>
    Effect.gen(function*() {
      const w = yield* world
      const turn = yield* ask(w, "hello")
      const agentMessage = turn.messages[1]
      const file = () =>
        w.admin.api.corrections.create({
          params: { id: turn.chatId },
          payload: { message_id: agentMessage.id, corrected_output: "Hi." }
        })
      const first = yield* file()
      const rejected = yield* w.admin.api.corrections.resolve({
        params: { id: first.id },
        payload: { status: "rejected" }
      })
      assert.deepInclude(rejected, { status: "rejected", knowledge_file_id: null })
      assert.isString(rejected.resolved_at)
      for (const status of ["accepted", "rejected"] as const) {
        const again = yield* w.admin.api.corrections.resolve({ params: { id: first.id }, payload: { status } }).pipe(
          Effect.flip
        )
        assert.strictEqual(again._tag, "Conflict")
        assert.match(messageOf(again), /already rejected/)
      }

      const second = yield* file()
      const outcomes = yield* Effect.forEach(
        ["accepted", "rejected", "accepted", "rejected"] as const,
        (status) => Effect.result(w.admin.api.corrections.resolve({ params: { id: second.id }, payload: { status } })),
        { concurrency: "unbounded" }
      )
      const won = outcomes.filter((o) => o._tag === "Success")
      assert.strictEqual(won.length, 1)
      assert.deepStrictEqual(
        outcomes.filter((o) => o._tag === "Failure").map((o) => o._tag === "Failure" ? o.failure._tag : ""),
        ["Conflict", "Conflict", "Conflict"]
      )

      const missing = yield* w.admin.api.corrections.resolve({
        params: { id: crypto.randomUUID() },
        payload: { status: "accepted" }
      }).pipe(Effect.flip)
      assert.strictEqual(missing._tag, "NotFound")
      const cookie = yield* sessionCookie(w.admin)
      const badStatus = yield* http(`/api/corrections/${second.id}`, json("PATCH", { status: "open" }, { cookie }))
      assert.strictEqual(badStatus.status, 400)

      yield* w.admin.api.admin.createUser({
        payload: { email: "reviewer@example.com", nombre: "Reviewer", password, role_id: "r_user" }
      })
      const reviewer = yield* signIn("reviewer@example.com", password)
      const third = yield* reviewer.api.corrections.create({
        params: { id: turn.chatId },
        payload: { message_id: agentMessage.id, corrected_output: "Hey." }
      })
      const refused = yield* reviewer.api.corrections.resolve({
        params: { id: third.id },
        payload: { status: "accepted" }
      }).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RoleMissing")
    }))

  it.effect("a room's chat is its participants': anyone else (administrators too) gets 404 correcting or resolving, and does not see its records", () =>
    Effect.gen(function*() {
      yield* setRoomsFlag(true)
      const { admin, seeded, support } = yield* roomSpace()
      yield* admin.api.admin.updateFlags({ payload: { feature_decision_records: true } })
      const ana = yield* person("Ana")
      const outsider = yield* person("Outsider")
      const auditor = yield* person("Auditor", "r_admin")
      const room = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
      yield* ana.client.api.rooms.addParticipant({ params: { id: room.id }, payload: { agent_id: support.id } })
      yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "@Support hello" } })
      const [answer] = yield* eventually(
        Effect.map(
          ana.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { limit: 500 } }),
          (frame) => frame.messages.filter((m) => m.role === "agent")
        ),
        (messages) => messages.length >= 1
      )
      const correction = { message_id: answer.id, corrected_output: "Hello, how can I help?" }
      const filed = yield* ana.client.api.corrections.create({ params: { id: room.chat_id }, payload: correction })
      const listedTo = (client: Sdk.Connected) =>
        Effect.map(
          client.api.corrections.listForAgent({ params: { id: support.id }, query: {} }),
          ({ corrections }) => corrections.map((c) => c.id)
        )
      assert.deepStrictEqual(yield* listedTo(ana.client), [filed.id])

      // Not participants: the chat, its records and their copies of the room's messages are not theirs to see.
      for (const stranger of [outsider.client, auditor.client, admin]) {
        const refused = yield* stranger.api.corrections.create({ params: { id: room.chat_id }, payload: correction })
          .pipe(Effect.flip)
        assert.strictEqual(refused._tag, "NotFound")
        assert.deepStrictEqual(yield* listedTo(stranger), [])
      }
      for (const reviewer of [auditor.client, admin]) {
        const hidden = yield* reviewer.api.corrections.resolve({
          params: { id: filed.id },
          payload: { status: "rejected" }
        }).pipe(Effect.flip)
        assert.strictEqual(hidden._tag, "NotFound")
      }

      // An administrator who takes part in the room reviews it.
      const me = yield* admin.api.auth.me()
      yield* admin.api.rooms.addParticipant({ params: { id: room.id }, payload: { user_id: me.user_id } })
      assert.deepStrictEqual(yield* listedTo(admin), [filed.id])
      const rejected = yield* admin.api.corrections.resolve({
        params: { id: filed.id },
        payload: { status: "rejected" }
      })
      assert.deepInclude(rejected, { status: "rejected", original_output: answer.content })
    }).pipe(Effect.orDie))

  it.effect("403 on all three endpoints when feature_decision_records is off, whatever the body or query", () =>
    Effect.gen(function*() {
      const w = yield* world
      const turn = yield* ask(w, "hello")
      const filed = yield* w.admin.api.corrections.create({
        params: { id: turn.chatId },
        payload: { message_id: turn.messages[1].id, corrected_output: "Hi." }
      })
      yield* w.admin.api.admin.updateFlags({ payload: { feature_decision_records: false } })
      const calls = [
        w.admin.api.corrections.create({
          params: { id: turn.chatId },
          payload: { message_id: turn.messages[1].id, corrected_output: "Hi." }
        }),
        w.admin.api.corrections.listForAgent({ params: { id: w.agent.id }, query: {} }),
        w.admin.api.corrections.resolve({ params: { id: filed.id }, payload: { status: "accepted" } })
      ] as ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>>
      for (const call of calls) {
        const refused = yield* Effect.flip(call)
        assert.strictEqual(refused._tag, "FeatureDisabled")
      }
      // The flag is decided before the body or query is read: a bad one is 403 too, not 400.
      const cookie = yield* sessionCookie(w.admin)
      const raw = [
        ["POST", `/api/chats/${turn.chatId}/corrections`, {}],
        ["POST", `/api/chats/${turn.chatId}/corrections`, "not json"],
        ["POST", `/api/chats/${turn.chatId}/corrections`, { message_id: 1, corrected_output: "   " }],
        ["GET", `/api/agents/${w.agent.id}/corrections?status=bogus`, undefined],
        ["PATCH", `/api/corrections/${filed.id}`, {}],
        ["PATCH", `/api/corrections/${filed.id}`, { status: "open" }]
      ] as const
      for (const [method, path, body] of raw) {
        const answer = yield* http(path, body === undefined ? { headers: { cookie } } : json(method, body, { cookie }))
        assert.strictEqual(answer.status, 403, `${method} ${path} ${JSON.stringify(body)}`)
        assert.strictEqual(answer.body._tag, "FeatureDisabled")
        assert.include(answer.body.error, "feature_decision_records")
      }
      yield* w.admin.api.admin.updateFlags({ payload: { feature_decision_records: true } })
      const back = yield* http(`/api/chats/${turn.chatId}/corrections`, json("POST", {}, { cookie }))
      assert.strictEqual(back.status, 400)
    }))
})
