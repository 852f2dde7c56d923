/**
 * Writes that decide on what they read, run at once (found by a concurrency
 * audit over HTTP): each must come out as if they had run one after the
 * other. On the embedded database transactions already run one at a time;
 * on PostgreSQL these are the interleavings the audit hit.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { ChatRepo } from "../src/Chat/ChatRepo.ts"
import { newAction, newSpace } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import {
  adminClient,
  createKey,
  http,
  json,
  keyClient,
  layer as testServer,
  secondTenant,
  serverSuite,
  sessionCookie
} from "./TestServer.ts"

/** Runs the requests at once. */
const together = <A, R>(requests: ReadonlyArray<Effect.Effect<A, never, R>>) =>
  Effect.all(requests, { concurrency: "unbounded" })

/** Work rooms on, a new space's default blueprints, and the administrator's client and session cookie. */
const roomsOn = Effect.gen(function*() {
  const admin = yield* adminClient
  const cookie = yield* sessionCookie(admin)
  yield* admin.api.admin.updateFlags({ payload: { feature_war_rooms: true } })
  const space = yield* newSpace()
  const seeded = yield* admin.api.blueprints.seedDefaults({ payload: { space_id: space.id } })
  return { admin, cookie, seeded }
})

const statuses = (answers: ReadonlyArray<{ readonly status: number }>) => answers.map((answer) => answer.status).sort()

layer(Layer.provideMerge(ChatRepo.layer, testServer()), serverSuite)("concurrent decisions", (it) => {
  it.effect("two removals of IP rules that each leave the caller covered by the other: one goes, one is 409", () =>
    Effect.gen(function*() {
      // A tenant of its own: a lock-out would not touch the others' tests.
      const tenant = yield* secondTenant()
      for (const cidr of ["127.0.0.1/32", "127.0.0.0/8", "10.0.0.0/8"]) {
        yield* tenant.client.api.security.createIpRule({ payload: { cidr } })
      }
      const { rules } = yield* tenant.client.api.security.listIpRules()
      const loopback = rules.filter((rule) => rule.cidr.startsWith("127."))
      const cookie = yield* sessionCookie(tenant.client)
      const answers = yield* together(
        loopback.map((rule) => http(`/api/security/ip-allowlist/${rule.id}`, { method: "DELETE", headers: { cookie } }))
      )
      assert.deepStrictEqual(statuses(answers), [200, 409])
      assert.strictEqual((yield* http("/api/auth/me", { headers: { cookie } })).status, 200)
    }))

  it.effect("four password changes from the same current password: one 200, whose password works; the others 401", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const email = `racer-${crypto.randomUUID().slice(0, 8)}@example.com`
      yield* admin.api.admin.createUser({
        payload: { email, nombre: "Racer", password: "Correct-Horse-9", role_id: "r_user" }
      })
      const candidates = ["Battery-Staple-41", "Battery-Staple-42", "Battery-Staple-43", "Battery-Staple-44"]
      const answers = yield* together(candidates.map((next) =>
        http(
          "/api/auth/change-password",
          json("POST", { email, current_password: "Correct-Horse-9", new_password: next })
        )
      ))
      assert.deepStrictEqual(statuses(answers), [200, 401, 401, 401])
      const winner = candidates[answers.findIndex((answer) => answer.status === 200)]
      for (const password of candidates) {
        const login = yield* http("/api/auth/login", json("POST", { email, password }))
        assert.strictEqual(login.status, password === winner ? 200 : 401, password)
      }
    }))

  it.effect("three partial ROI settings updates at once keep all three changes", () =>
    Effect.gen(function*() {
      const tenant = yield* secondTenant()
      const cookie = yield* sessionCookie(tenant.client)
      const put = (body: Record<string, unknown>) => http("/api/export/roi-settings", json("PUT", body, { cookie }))
      const answers = yield* together([
        put({ minutes_saved_per_message: 1 }),
        put({ minutes_saved_per_action: 20 }),
        put({ token_cost_per_1k: 0.5 })
      ])
      assert.deepStrictEqual(statuses(answers), [200, 200, 200])
      assert.deepStrictEqual(yield* tenant.client.api.exports.roiSettings(), {
        minutes_saved_per_message: 1,
        minutes_saved_per_action: 20,
        token_cost_per_1k: 0.5
      })
    }))

  it.effect("a Space Admin assignment and a promotion to r_admin at once: the promotion is never lost", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const cookie = yield* sessionCookie(admin)
      const space = yield* newSpace()
      for (let trial = 0; trial < 5; trial++) {
        const user = yield* admin.api.admin.createUser({
          payload: {
            email: `promoted-${crypto.randomUUID().slice(0, 8)}@example.com`,
            nombre: "Promoted",
            password: "Correct-Horse-9",
            role_id: "r_user"
          }
        })
        const answers = yield* together([
          http("/api/space-admin/assignments", json("POST", { user_id: user.id, space_id: space.id }, { cookie })),
          http(`/api/admin/users/${user.id}`, json("PATCH", { role_id: "r_admin" }, { cookie }))
        ])
        assert.deepStrictEqual(statuses(answers), [200, 200])
        const { users } = yield* admin.api.admin.listUsers()
        assert.strictEqual(users.find((u) => u.id === user.id)?.role_id, "r_admin", `trial ${trial}`)
      }
    }))

  it.effect("an assignment racing the user's deletion answers 200 or 404, never 500", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const cookie = yield* sessionCookie(admin)
      const scim = yield* createKey(["scim"])
      const space = yield* newSpace()
      for (let trial = 0; trial < 3; trial++) {
        const user = yield* admin.api.admin.createUser({
          payload: {
            email: `leaving-${crypto.randomUUID().slice(0, 8)}@example.com`,
            nombre: "Leaving",
            password: "Correct-Horse-9",
            role_id: "r_user"
          }
        })
        const assign = http(
          "/api/space-admin/assignments",
          json("POST", { user_id: user.id, space_id: space.id }, { cookie })
        )
        const answers = yield* together([
          ...Array.from({ length: 6 }, () => assign),
          http(`/v1/scim/Users/${user.id}`, { method: "DELETE", headers: { authorization: `Bearer ${scim.key}` } })
        ])
        for (const answer of answers) assert.oneOf(answer.status, [200, 204, 404], JSON.stringify(answer.body))
      }
    }))

  it.effect("invitations racing a room's close: each 201 or 409; a 201's person is in the closed room, a 409 adds nobody", () =>
    Effect.gen(function*() {
      const { admin, cookie, seeded } = yield* roomsOn
      const invitees = yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), (i) =>
        admin.api.admin.createUser({
          payload: {
            email: `invitee-${i}-${crypto.randomUUID().slice(0, 8)}@example.com`,
            nombre: `Invitee ${i}`,
            password: "Correct-Horse-9",
            role_id: "r_user"
          }
        }))
      const { room } = yield* admin.api.rooms.create({
        payload: { external_ref: `race-${crypto.randomUUID()}`, blueprint_id: seeded.blueprint_ids.ephemeral }
      })
      const answers = yield* together([
        ...invitees.map((invitee) =>
          http(`/api/rooms/${room.id}/invite`, json("POST", { user_id: invitee.id }, { cookie }))
        ),
        http(`/api/rooms/${room.id}/close`, json("POST", {}, { cookie }))
      ])
      for (const answer of answers) assert.oneOf(answer.status, [200, 201, 409], JSON.stringify(answer.body))
      // An invitation answered 201 joined before the close: the closed room, read once the close is done, lists
      // its person; one answered 409 added nobody.
      const closed = answers.at(-1)!
      assert.strictEqual(closed.status, 200)
      const listed = new Set(
        (closed.body.participants as ReadonlyArray<{ readonly user_id?: string }>).flatMap((p) => p.user_id ?? [])
      )
      const final = yield* admin.api.rooms.get({ params: { id: room.id } })
      const present = new Set(final.participants.flatMap((p) => ("user_id" in p ? [p.user_id] : [])))
      invitees.forEach((invitee, i) => {
        if (answers[i].status === 201) assert.isTrue(listed.has(invitee.id), `invite ${i} answered 201 after the close`)
        else assert.isFalse(present.has(invitee.id), `invite ${i} answered 409 but joined`)
      })
    }))

  it.effect("a persistent room's close racing its reopen: the close answers the closed room with its minutes, written once", () =>
    Effect.gen(function*() {
      const { admin, cookie, seeded } = yield* roomsOn
      const ref = `standing-${crypto.randomUUID()}`
      const { room } = yield* admin.api.rooms.create({
        payload: { external_ref: ref, blueprint_id: seeded.blueprint_ids.persistent }
      })
      const sql = yield* SqlClient.SqlClient
      for (let trial = 0; trial < 8; trial++) {
        // A room that is open again: a reopen of the closed room waits for nothing.
        yield* admin.api.rooms.create({ payload: { external_ref: ref } })
        yield* admin.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: `We decided on ${trial}.` }
        })
        const [closed, reopened] = yield* together([
          http(`/api/rooms/${room.id}/close`, json("POST", {}, { cookie })),
          // Sent a moment later, so that it mostly finds the room closed, its minutes not yet stored.
          Effect.andThen(
            Effect.sleep(`${trial} millis`),
            http("/api/rooms", json("POST", { external_ref: ref }, { cookie }))
          )
        ])
        assert.strictEqual(closed.status, 200, JSON.stringify(closed.body))
        assert.strictEqual(closed.body.status, "closed")
        // Each period's minutes cover that period alone.
        assert.deepInclude(closed.body.minutes, {
          decisions: [{ decision: `We decided on ${trial}.`, owner: null }],
          message_count: 1
        })
        assert.strictEqual(reopened.status, 200, JSON.stringify(reopened.body))
        assert.strictEqual(reopened.body.room.id, room.id)
      }
      // Every close got its minutes, once: its audit entry and its two messages, whichever request wrote them.
      const [{ closes }] = yield* sql<{ closes: number }>`
        SELECT count(*)::int AS closes FROM audit_logs WHERE target = ${`room:${room.id}`} AND event = 'room.closed'`
      assert.strictEqual(closes, 8)
      const summaries = yield* sql<{ content: string }>`
        SELECT content FROM chat_messages WHERE chat_id = ${room.chat_id} AND content LIKE 'Decisions:%' ORDER BY seq`
      assert.deepStrictEqual(
        summaries.map((m) => m.content),
        Array.from({ length: 8 }, (_, trial) => `Decisions:\n- We decided on ${trial}.`)
      )
    }))

  it.effect("executions racing the deletion of webhook subscriptions: every call answered and recorded once", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const cookie = yield* sessionCookie(admin)
      const target = yield* localServer(() => jsonAnswer(200, { ok: true }))
      const receiver = yield* localServer(() => jsonAnswer(200, {}))
      const action = yield* newAction({ url: `${target.url}/run` })
      const { key } = yield* createKey(["actions"])
      const client = yield* keyClient(key)
      const sql = yield* SqlClient.SqlClient
      const executions = () =>
        Effect.map(
          sql<{ count: number }>`SELECT count(*)::int AS count FROM action_executions WHERE action_id = ${action.id}`,
          (rows) => rows[0].count
        )
      for (let trial = 0; trial < 3; trial++) {
        const subscriptions = yield* Effect.forEach(
          [1, 2, 3],
          (i) => admin.api.webhooks.create({ payload: { name: `race ${trial}-${i}`, url: `${receiver.url}/hook` } })
        )
        const answers = yield* together([
          ...Array.from(
            { length: 9 },
            () =>
              client.api.actions.execute({ params: { id: action.id }, payload: { params: {} } }).pipe(
                Effect.as({ status: 200 }),
                Effect.catch((error) =>
                  Effect.succeed({ status: (error as { status_code?: number }).status_code ?? 0 })
                )
              )
          ),
          ...subscriptions.map((sub) => http(`/api/webhook-subs/${sub.id}`, { method: "DELETE", headers: { cookie } }))
        ])
        for (const answer of answers) assert.strictEqual(answer.status, 200)
      }
      assert.strictEqual(yield* executions(), target.received.length)
      assert.strictEqual(target.received.length, 27)
    }))

  it.effect("an agent deleted while it answers: its message is kept, without the agent", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const space = yield* newSpace()
      const agent = yield* admin.api.agentsAdmin.create({
        payload: { space_id: space.id, name: "Leaving", summary: "", is_primary: true }
      })
      const { key } = yield* createKey(["chat"], { space_id: space.id })
      const answer = yield* http(
        "/v1/chat/completions",
        json("POST", { message: "hello" }, { authorization: `Bearer ${key}`, accept: "text/event-stream" })
      )
      assert.strictEqual(answer.status, 200)
      const chatId = answer.headers.get("x-chat-id")!
      yield* admin.api.agentsAdmin.delete({ params: { id: agent.id } })
      // The turn's answer is stored when its stream ends: here, after its agent is gone.
      const repo = yield* ChatRepo
      const stored = yield* repo.appendMessage({
        tenantId: (yield* admin.api.auth.me()).tenant_id,
        chatId,
        role: "agent",
        content: "an answer finished after the agent was deleted",
        agentId: agent.id,
        tokensInput: 0,
        tokensOutput: 0
      })
      assert.isNull(stored.agent_id)
      const history = yield* Effect.flatMap(keyClient(key), (c) => c.api.chat.history({ params: { chatId } }))
      assert.strictEqual(history.messages.at(-1)?.content, "an answer finished after the agent was deleted")
    }))
})
