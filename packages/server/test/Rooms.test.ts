/**
 * Work rooms over HTTP (spec: "Room and related", rooms endpoints and rules
 * 1–4, the Room rows of "States and transitions"; issue #10): the flag,
 * blueprints and their seeded defaults, find-or-create and lifecycles,
 * participants, invitations and the in-app inbox, invitable users, append,
 * poll and long poll, agents that answer mentions (only the person asked
 * answers an agent's question), and closing with minutes — which a client
 * going away or a stopped process does not lose — through the SDK, and raw
 * HTTP for bad input.
 */
import type * as Sdk from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import roomAnswersAndMinutes from "../src/migrations/0022_room_answers_and_minutes.ts"
import { ticketAction } from "./Catalog.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import {
  anaAndBoInARoom,
  appendRaw,
  asUser,
  eventually,
  memberPassword,
  newRoom,
  person,
  roomSpace,
  setRoomsFlag
} from "./RoomsFixtures.ts"
import {
  bearer,
  createKey,
  http,
  json,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  signIn
} from "./TestServer.ts"

const auditEvents = (chain: "audit_logs" | "admin_audit_log", target: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ event: string }>`SELECT event FROM ${sql(chain)} WHERE target = ${target} ORDER BY seq`
    return rows.map((row) => row.event)
  }).pipe(Effect.orDie)

layer(testServer({ APP_BASE_URL: "https://rooms.example.com/app/" }), serverSuite)("work rooms", (it) => {
  describe("the feature_war_rooms flag", () => {
    it.effect("off: every rooms, blueprints and room-chat endpoint answers 403 naming the flag; on again: all back", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded } = yield* roomSpace()
        const room = yield* newRoom(admin, seeded.blueprint_ids.ephemeral)
        yield* setRoomsFlag(false)
        const calls = [
          ["GET", "/api/rooms"],
          ["POST", "/api/rooms", { external_ref: "x" }],
          ["GET", `/api/rooms/${room.id}`],
          ["POST", `/api/rooms/${room.id}/participants`, { user_id: crypto.randomUUID() }],
          ["POST", `/api/rooms/${room.id}/invite`, { user_id: crypto.randomUUID() }],
          ["GET", `/api/rooms/${room.id}/invitable-users`],
          ["POST", `/api/rooms/${room.id}/close`],
          ["GET", "/api/room-blueprints"],
          ["POST", "/api/room-blueprints", { name: "x", lifecycle: "ephemeral", space_id: room.space_id }],
          ["POST", "/api/room-blueprints/seed-defaults", { space_id: room.space_id }],
          ["POST", `/api/chats/${room.chat_id}/messages/append`, { content: "hi" }],
          ["GET", `/api/chats/${room.chat_id}/messages`],
          ["GET", `/api/chats/${room.chat_id}/ws`]
        ] as const
        for (const [method, path, body] of calls) {
          const answer = yield* asUser(admin, path, body === undefined ? { method } : json(method, body))
          assert.strictEqual(answer.status, 403, `${method} ${path}`)
          assert.strictEqual(answer.body._tag, "FeatureDisabled", `${method} ${path}`)
          assert.include(answer.body.error, "feature_war_rooms", `${method} ${path}`)
        }
        yield* setRoomsFlag(true)
        const back = yield* admin.api.rooms.get({ params: { id: room.id } })
        assert.strictEqual(back.id, room.id)
        assert.strictEqual((yield* asUser(admin, `/api/chats/${room.chat_id}/messages`)).status, 200)
      }))
  })
  describe("blueprints", () => {
    it.effect("an administrator creates one with agents of its space (201) and lists it; a user cannot (403)", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, space, support } = yield* roomSpace()
        const created = yield* admin.api.blueprints.create({
          payload: {
            name: "War room",
            lifecycle: "persistent",
            space_id: space.id,
            description: "Outages",
            agents: [{ agent_id: support.id, always_on: false }]
          }
        })
        assert.deepInclude(created, {
          name: "War room",
          lifecycle: "persistent",
          space_id: space.id,
          description: "Outages"
        })
        assert.deepStrictEqual(created.agents, [{ agent_id: support.id, name: "Support", always_on: false }])
        assert.isString(created.created_at)
        const listed = yield* admin.api.blueprints.list()
        assert.deepInclude(listed.blueprints, created)
        const member = yield* person("Blueprint Reader")
        assert.isTrue((yield* member.client.api.blueprints.list()).blueprints.some((b) => b.id === created.id))
        const refused = yield* member.client.api.blueprints.create({
          payload: { name: "x", lifecycle: "ephemeral", space_id: space.id }
        }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "RoleMissing")
        assert.deepInclude(
          yield* auditEvents("admin_audit_log", `room_blueprint:${created.id}`),
          "room_blueprint.created"
        )
      }))

    it.effect("400 for an agent of another space, 404 for an unknown space", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, space } = yield* roomSpace()
        const other = yield* roomSpace()
        const foreign = yield* admin.api.blueprints.create({
          payload: { name: "x", lifecycle: "ephemeral", space_id: space.id, agents: [{ agent_id: other.support.id }] }
        }).pipe(Effect.flip)
        assert.strictEqual(foreign._tag, "InvalidRequest")
        assert.include(messageOf(foreign), other.support.id)
        const unknown = yield* admin.api.blueprints.create({
          payload: { name: "x", lifecycle: "ephemeral", space_id: crypto.randomUUID() }
        })
          .pipe(Effect.flip)
        assert.strictEqual(unknown._tag, "NotFound")
        const bad = yield* asUser(
          admin,
          "/api/room-blueprints",
          json("POST", { name: "x", lifecycle: "forever", space_id: space.id })
        )
        assert.strictEqual(bad.status, 400)
      }))

    it.effect("400 naming an agent listed twice (whatever its always_on) or a name of only white space; nothing is created", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, space, support } = yield* roomSpace()
        const name = `twice-${crypto.randomUUID()}`
        const twice = yield* asUser(
          admin,
          "/api/room-blueprints",
          json("POST", {
            name,
            lifecycle: "ephemeral",
            space_id: space.id,
            agents: [{ agent_id: support.id, always_on: true }, { agent_id: support.id, always_on: false }]
          })
        )
        assert.strictEqual(twice.status, 400)
        assert.strictEqual(twice.body._tag, "InvalidRequest")
        assert.include(twice.body.error, "agents")
        assert.include(twice.body.error, `agent ${support.id} is listed more than once`)
        const blank = yield* asUser(
          admin,
          "/api/room-blueprints",
          json("POST", { name: " \t ", lifecycle: "ephemeral", space_id: space.id })
        )
        assert.strictEqual(blank.status, 400)
        assert.include(blank.body.error, "name")
        assert.include(blank.body.error, "white space")
        const listed = (yield* admin.api.blueprints.list()).blueprints.filter((b) => b.space_id === space.id)
        assert.deepStrictEqual(listed.map((b) => b.name).filter((n) => n === name || n.trim() === ""), [])
      }))

    it.effect("seed-defaults makes the summary and decisions agents and both blueprints once, even when called concurrently", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, space, seeded } = yield* roomSpace()
        const again = yield* Effect.all(
          Array.from({ length: 5 }, () => admin.api.blueprints.seedDefaults({ payload: { space_id: space.id } })),
          { concurrency: "unbounded" }
        )
        for (const answer of again) assert.deepStrictEqual(answer, seeded)
        const blueprints = (yield* admin.api.blueprints.list()).blueprints.filter((b) => b.space_id === space.id)
        assert.deepStrictEqual(blueprints.map((b) => b.lifecycle).sort(), ["ephemeral", "persistent"])
        assert.deepStrictEqual(
          blueprints.map((b) => b.id).sort(),
          [seeded.blueprint_ids.ephemeral, seeded.blueprint_ids.persistent].sort()
        )
        for (const blueprint of blueprints) {
          assert.deepStrictEqual(blueprint.agents, [
            { agent_id: seeded.agent_ids.summary, name: "Summary", always_on: true },
            { agent_id: seeded.agent_ids.decisions, name: "Decisions", always_on: true }
          ])
        }
        const agents = (yield* admin.api.agentsAdmin.list({ query: { space_id: space.id } })).agents
        assert.deepStrictEqual(agents.map((a) => a.name).sort(), ["Decisions", "Summary", "Support"])
        assert.isTrue(agents.filter((a) => a.name !== "Support").every((a) => a.always_on))
        const unknown = yield* admin.api.blueprints.seedDefaults({ payload: { space_id: crypto.randomUUID() } }).pipe(
          Effect.flip
        )
        assert.strictEqual(unknown._tag, "NotFound")
        assert.deepStrictEqual(yield* auditEvents("admin_audit_log", `space:${space.id}`), [
          "space.created",
          "room_blueprint.defaults_seeded"
        ])
      }))
  })

  describe("POST /api/rooms", () => {
    it.effect("creates a room (201) with the caller and the blueprint's agents; the same ref answers it again (200, created false)", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { space, seeded } = yield* roomSpace()
        const creator = yield* person("Creator")
        const ref = `ticket-${crypto.randomUUID()}`
        const first = yield* creator.client.api.rooms.create({
          payload: { external_ref: ref, blueprint_id: seeded.blueprint_ids.ephemeral, title: "Checkout is down" }
        })
        assert.isTrue(first.created)
        const room = first.room
        assert.deepInclude(room, {
          external_ref: ref,
          title: "Checkout is down",
          blueprint_id: seeded.blueprint_ids.ephemeral,
          space_id: space.id,
          lifecycle: "ephemeral",
          status: "open",
          room_mode: "chat",
          closed_at: null,
          minutes: null
        })
        assert.isString(room.chat_id)
        const participants = room.participants.map((
          p
        ) => ("user_id" in p ? `user:${p.user_id}:${p.nombre}` : `agent:${p.agent_id}:${p.name}:${p.always_on}`))
        assert.deepStrictEqual(participants, [
          `user:${creator.id}:Creator`,
          `agent:${seeded.agent_ids.summary}:Summary:true`,
          `agent:${seeded.agent_ids.decisions}:Decisions:true`
        ])
        const again = yield* creator.client.api.rooms.create({ payload: { external_ref: ref } })
        assert.isFalse(again.created)
        assert.strictEqual(again.room.id, room.id)
        const raw = yield* asUser(creator.client, "/api/rooms", json("POST", { external_ref: ref }))
        assert.strictEqual(raw.status, 200)
        assert.deepInclude(yield* auditEvents("audit_logs", `room:${room.id}`), "room.created")
      }))

    it.effect("400 naming external_ref when it is empty or only white space", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const author = yield* person("Author")
        for (const external_ref of ["", "   ", "\t\n"]) {
          const refused = yield* asUser(
            author.client,
            "/api/rooms",
            json("POST", { external_ref, blueprint_id: seeded.blueprint_ids.ephemeral })
          )
          assert.strictEqual(refused.status, 400, JSON.stringify(external_ref))
          assert.strictEqual(refused.body._tag, "InvalidRequest")
          assert.include(refused.body.error, "external_ref")
        }
        assert.deepStrictEqual((yield* author.client.api.rooms.list({ query: {} })).rooms, [])
      }))

    it.effect("20 concurrent calls with one ref make exactly one room", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const callers = yield* Effect.all([person("Racer A"), person("Racer B")])
        const ref = `race-${crypto.randomUUID()}`
        const answers = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) =>
            callers[i % 2].client.api.rooms.create({
              payload: { external_ref: ref, blueprint_id: seeded.blueprint_ids.ephemeral }
            })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(
          answers.filter((a) => a.created).length,
          1
        )
        assert.strictEqual(new Set(answers.map((a) => a.room.id)).size, 1)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM rooms WHERE external_ref = ${ref}`
        assert.strictEqual(rows[0].count, 1)
        const room = yield* callers[0].client.api.rooms.get({ params: { id: answers[0].room.id } })
        assert.deepStrictEqual(
          room.participants.flatMap((p) => ("user_id" in p ? [p.user_id] : [])).sort(),
          callers.map((c) => c.id).sort()
        )
      }))

    it.effect("ephemeral: after a close the same ref makes a new room (201); persistent: it reopens the same room (200)", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded } = yield* roomSpace()
        const ref = `shared-${crypto.randomUUID()}`
        const ephemeral = yield* newRoom(admin, seeded.blueprint_ids.ephemeral, ref)
        yield* admin.api.rooms.close({ params: { id: ephemeral.id } })
        const next = yield* admin.api.rooms.create({
          payload: { external_ref: ref, blueprint_id: seeded.blueprint_ids.ephemeral }
        })
        assert.isTrue(next.created)
        assert.notStrictEqual(next.room.id, ephemeral.id)

        const standingRef = `standing-${crypto.randomUUID()}`
        const persistent = yield* newRoom(admin, seeded.blueprint_ids.persistent, standingRef)
        yield* admin.api.rooms.close({ params: { id: persistent.id } })
        const reopened = yield* asUser(
          admin,
          "/api/rooms",
          json("POST", { external_ref: standingRef, blueprint_id: seeded.blueprint_ids.persistent })
        )
        assert.strictEqual(reopened.status, 200)
        assert.isFalse(reopened.body.created)
        assert.strictEqual(reopened.body.room.id, persistent.id)
        assert.strictEqual(reopened.body.room.status, "open")
        assert.isNull(reopened.body.room.closed_at)
        assert.isNull(reopened.body.room.minutes)
        assert.deepStrictEqual(yield* auditEvents("audit_logs", `room:${persistent.id}`), [
          "room.created",
          "room.closed",
          "room.reopened"
        ])
      }))

    it.effect("403 for a Space Admin of another space; 404 unknown blueprint; 400 without a blueprint where none was seeded", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded } = yield* roomSpace()
        const elsewhere = yield* roomSpace()
        const spaceAdmin = yield* person("Space Admin")
        yield* admin.api.spaceAdmin.assign({ payload: { user_id: spaceAdmin.id, space_id: elsewhere.space.id } })
        // The role change ended their session.
        const client = yield* signIn(spaceAdmin.email, memberPassword)
        const refused = yield* client.api.rooms.create({
          payload: { external_ref: `sa-${crypto.randomUUID()}`, blueprint_id: seeded.blueprint_ids.ephemeral }
        })
          .pipe(Effect.flip)
        assert.strictEqual(refused._tag, "SpaceNotAccessible")
        const own = yield* client.api.rooms.create({
          payload: { external_ref: `sa-${crypto.randomUUID()}`, blueprint_id: elsewhere.seeded.blueprint_ids.ephemeral }
        })
        assert.isTrue(own.created)
        const unknown = yield* admin.api.rooms.create({
          payload: { external_ref: "x", blueprint_id: crypto.randomUUID() }
        }).pipe(Effect.flip)
        assert.strictEqual(unknown._tag, "NotFound")
        const other = yield* secondTenant()
        yield* setRoomsFlag(true, other.client)
        const none = yield* other.client.api.rooms.create({ payload: { external_ref: "no-blueprint" } }).pipe(
          Effect.flip
        )
        assert.strictEqual(none._tag, "InvalidRequest")
        assert.include(messageOf(none), "seed-defaults")
        // Without blueprint_id, the tenant's seeded ephemeral blueprint is used.
        const code = `fresh-${crypto.randomUUID().slice(0, 8)}`
        const space = yield* other.client.api.admin.createSpace({ payload: { code, name: code } })
        const seededThere = yield* other.client.api.blueprints.seedDefaults({ payload: { space_id: space.id } })
        const defaulted = yield* other.client.api.rooms.create({ payload: { external_ref: "no-blueprint" } })
        assert.strictEqual(defaulted.room.blueprint_id, seededThere.blueprint_ids.ephemeral)
      }).pipe(Effect.orDie))
  })
  describe("GET /api/rooms and /api/rooms/{id}", () => {
    it.effect("administrators list every room, others the rooms they take part in; filters and cursor pages", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded } = yield* roomSpace()
        const member = yield* person("Lister")
        const mine = yield* Effect.all([1, 2, 3].map(() => newRoom(member.client, seeded.blueprint_ids.ephemeral)))
        const persistent = yield* newRoom(member.client, seeded.blueprint_ids.persistent)
        const notMine = yield* newRoom(admin, seeded.blueprint_ids.ephemeral)
        yield* member.client.api.rooms.close({ params: { id: mine[0].id } })
        const listed = yield* member.client.api.rooms.list({ query: {} })
        const ids = listed.rooms.map((r) => r.id)
        assert.deepStrictEqual(ids, [persistent.id, mine[2].id, mine[1].id, mine[0].id])
        assert.isFalse(ids.includes(notMine.id))
        const adminIds = (yield* admin.api.rooms.list({ query: { limit: 100 } })).rooms.map((r) => r.id)
        assert.includeMembers(adminIds, [...ids, notMine.id])
        const open = yield* member.client.api.rooms.list({ query: { status: "open" } })
        assert.deepStrictEqual(open.rooms.map((r) => r.id), [persistent.id, mine[2].id, mine[1].id])
        const closed = yield* member.client.api.rooms.list({ query: { status: "closed" } })
        assert.deepStrictEqual(closed.rooms.map((r) => r.id), [mine[0].id])
        assert.isNotNull(closed.rooms[0].minutes)
        const byBlueprint = yield* member.client.api.rooms.list({
          query: { blueprint_id: seeded.blueprint_ids.persistent }
        })
        assert.deepStrictEqual(byBlueprint.rooms.map((r) => r.id), [persistent.id])
        const page1 = yield* member.client.api.rooms.list({ query: { limit: 3 } })
        assert.strictEqual(page1.rooms.length, 3)
        assert.isString(page1.next_cursor)
        const page2 = yield* member.client.api.rooms.list({ query: { limit: 3, cursor: page1.next_cursor! } })
        assert.deepStrictEqual(page2.rooms.map((r) => r.id), [mine[0].id])
        assert.isNull(page2.next_cursor)
        const badCursor = yield* asUser(member.client, "/api/rooms?cursor=abc")
        assert.strictEqual(badCursor.status, 400)
        const badStatus = yield* asUser(member.client, "/api/rooms?status=sleeping")
        assert.strictEqual(badStatus.status, 400)
      }))

    it.effect("403 for a non-participant, administrators may read; 404 unknown or another tenant's", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const owner = yield* person("Owner")
        const stranger = yield* person("Stranger")
        const room = yield* newRoom(owner.client, seeded.blueprint_ids.ephemeral)
        const refused = yield* stranger.client.api.rooms.get({ params: { id: room.id } }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "NotParticipant")
        const admin = yield* person("Tenant Admin", "r_admin")
        assert.strictEqual((yield* admin.client.api.rooms.get({ params: { id: room.id } })).id, room.id)
        for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
          const missing = yield* owner.client.api.rooms.get({ params: { id } }).pipe(Effect.flip)
          assert.strictEqual(missing._tag, "NotFound")
        }
        const other = yield* secondTenant()
        yield* setRoomsFlag(true, other.client)
        const foreign = yield* asUser(other.client, `/api/rooms/${room.id}`)
        assert.strictEqual(foreign.status, 404)
      }))
  })

  describe("POST /api/rooms/{id}/participants", () => {
    it.effect("adds a person or an agent (201), the same again answers 200 with the same participant", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded, support } = yield* roomSpace()
        const owner = yield* person("Owner")
        const guest = yield* person("Guest")
        const room = yield* newRoom(owner.client, seeded.blueprint_ids.ephemeral)
        const added = yield* asUser(
          owner.client,
          `/api/rooms/${room.id}/participants`,
          json("POST", { user_id: guest.id })
        )
        assert.strictEqual(added.status, 201)
        assert.deepInclude(added.body, { added: true })
        assert.deepInclude(added.body.participant, { user_id: guest.id, nombre: "Guest" })
        const again = yield* asUser(
          owner.client,
          `/api/rooms/${room.id}/participants`,
          json("POST", { user_id: guest.id })
        )
        assert.strictEqual(again.status, 200)
        assert.deepStrictEqual(again.body.participant, added.body.participant)
        const agent = yield* owner.client.api.rooms.addParticipant({
          params: { id: room.id },
          payload: { agent_id: support.id, always_on: false }
        })
        assert.isTrue(agent.added)
        assert.deepInclude(agent.participant, { agent_id: support.id, name: "Support", always_on: false })
        const read = yield* guest.client.api.rooms.get({ params: { id: room.id } })
        assert.strictEqual(read.participants.length, 5)
        assert.includeMembers(yield* auditEvents("audit_logs", `room:${room.id}`), [
          "room.created",
          "room.participant_added"
        ])
      }))

    it.effect("400 for another space's agent or a bad body, 403 for a non-participant, 404 unknown user or agent, 409 closed", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const elsewhere = yield* roomSpace()
        const owner = yield* person("Owner")
        const stranger = yield* person("Stranger")
        const room = yield* newRoom(owner.client, seeded.blueprint_ids.ephemeral)
        const path = `/api/rooms/${room.id}/participants`
        assert.strictEqual(
          (yield* asUser(owner.client, path, json("POST", { agent_id: elsewhere.support.id }))).status,
          400
        )
        assert.strictEqual((yield* asUser(owner.client, path, json("POST", {}))).status, 400)
        assert.strictEqual(
          (yield* asUser(owner.client, path, json("POST", { user_id: stranger.id, agent_id: elsewhere.support.id })))
            .status,
          400
        )
        const notMine = yield* asUser(stranger.client, path, json("POST", { user_id: stranger.id }))
        assert.strictEqual(notMine.status, 403)
        assert.strictEqual(notMine.body._tag, "NotParticipant")
        assert.strictEqual(
          (yield* asUser(owner.client, path, json("POST", { user_id: crypto.randomUUID() }))).status,
          404
        )
        assert.strictEqual(
          (yield* asUser(owner.client, path, json("POST", { agent_id: crypto.randomUUID() }))).status,
          404
        )
        yield* owner.client.api.rooms.close({ params: { id: room.id } })
        const closed = yield* asUser(owner.client, path, json("POST", { user_id: stranger.id }))
        assert.strictEqual(closed.status, 409)
        assert.strictEqual(closed.body._tag, "RoomClosed")
      }))
  })

  describe("POST /api/rooms/{id}/invite and the inbox", () => {
    it.effect("adds the user and stores an in-app notification with the deep link (201); GET /api/notifications, mark read", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const host = yield* person("Host")
        const guest = yield* person("Guest")
        const room = yield* host.client.api.rooms.create({
          payload: {
            external_ref: `inv-${crypto.randomUUID()}`,
            blueprint_id: seeded.blueprint_ids.ephemeral,
            title: "Release review"
          }
        }).pipe(Effect.map((r) => r.room))
        const raw = yield* asUser(host.client, `/api/rooms/${room.id}/invite`, json("POST", { user_id: guest.id }))
        assert.strictEqual(raw.status, 201)
        assert.deepStrictEqual(raw.body, {
          success: true,
          invited: guest.id,
          link: `https://rooms.example.com/app/rooms/${room.id}`,
          notified: { inApp: true, pushSent: false }
        })
        const read = yield* guest.client.api.rooms.get({ params: { id: room.id } })
        assert.isTrue(read.participants.some((p) => "user_id" in p && p.user_id === guest.id))
        const inbox = yield* guest.client.api.notifications.list({ query: {} })
        assert.strictEqual(inbox.unread_count, 1)
        assert.deepInclude(inbox.notifications[0], {
          kind: "room_invitation",
          title: "Host invited you to a room",
          body: "Release review",
          link: `https://rooms.example.com/app/rooms/${room.id}`,
          room_id: room.id,
          read_at: null
        })
        const marked = yield* guest.client.api.notifications.markRead({ params: { id: inbox.notifications[0].id } })
        assert.isString(marked.read_at)
        const twice = yield* guest.client.api.notifications.markRead({ params: { id: inbox.notifications[0].id } })
        assert.strictEqual(twice.read_at, marked.read_at)
        assert.strictEqual((yield* guest.client.api.notifications.list({ query: {} })).unread_count, 0)
        const notHers = yield* host.client.api.notifications.markRead({ params: { id: inbox.notifications[0].id } })
          .pipe(Effect.flip)
        assert.strictEqual(notHers._tag, "NotFound")
        assert.strictEqual((yield* host.client.api.notifications.list({ query: {} })).notifications.length, 0)
        assert.deepInclude(yield* auditEvents("audit_logs", `room:${room.id}`), "room.invited")
      }))

    it.effect("pages notifications newest first", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const host = yield* person("Host")
        const guest = yield* person("Guest")
        const rooms = yield* Effect.all([1, 2, 3].map(() => newRoom(host.client, seeded.blueprint_ids.ephemeral)))
        for (const room of rooms) {
          yield* host.client.api.rooms.invite({ params: { id: room.id }, payload: { user_id: guest.id } })
        }
        const first = yield* guest.client.api.notifications.list({ query: { limit: 2 } })
        assert.deepStrictEqual(
          first.notifications.map((n) => n.room_id),
          [rooms[2].id, rooms[1].id]
        )
        assert.strictEqual(first.unread_count, 3)
        const second = yield* guest.client.api.notifications.list({ query: { limit: 2, cursor: first.next_cursor! } })
        assert.deepStrictEqual(second.notifications.map((n) => n.room_id), [rooms[0].id])
        assert.isNull(second.next_cursor)
      }))

    it.effect("400 missing user_id or self-invitation, 403 inviter not a participant, 404 unknown user, 409 closed room", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const host = yield* person("Host")
        const stranger = yield* person("Stranger")
        const room = yield* newRoom(host.client, seeded.blueprint_ids.ephemeral)
        const path = `/api/rooms/${room.id}/invite`
        const missing = yield* asUser(host.client, path, json("POST", {}))
        assert.strictEqual(missing.status, 400)
        assert.include(missing.body.error, "user_id")
        const self = yield* asUser(host.client, path, json("POST", { user_id: host.id }))
        assert.strictEqual(self.status, 400)
        const outsider = yield* asUser(stranger.client, path, json("POST", { user_id: host.id }))
        assert.strictEqual(outsider.status, 403)
        assert.strictEqual(
          (yield* asUser(host.client, path, json("POST", { user_id: crypto.randomUUID() }))).status,
          404
        )
        const other = yield* secondTenant()
        const foreignUser = yield* asUser(
          host.client,
          path,
          json("POST", { user_id: (yield* other.client.api.auth.me()).user_id })
        )
        assert.strictEqual(foreignUser.status, 404)
        yield* host.client.api.rooms.close({ params: { id: room.id } })
        const closed = yield* asUser(host.client, path, json("POST", { user_id: stranger.id }))
        assert.strictEqual(closed.status, 409)
        assert.strictEqual((yield* stranger.client.api.notifications.list({ query: {} })).notifications.length, 0)
      }))
  })

  describe("GET /api/rooms/{id}/invitable-users", () => {
    it.effect("active people not yet taking part, without service accounts; q by name or email, literally; sorted; at most 50", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const other = yield* secondTenant()
        const client = other.client
        yield* setRoomsFlag(true, client)
        const code = `inv-${crypto.randomUUID().slice(0, 8)}`
        const space = yield* client.api.admin.createSpace({ payload: { code, name: code } })
        const seeded = yield* client.api.blueprints.seedDefaults({ payload: { space_id: space.id } })
        const room = yield* newRoom(client, seeded.blueprint_ids.ephemeral)
        const sql = yield* SqlClient.SqlClient
        const tenantId = other.tenant.id
        const insert = (nombre: string, email: string, fields: { active?: boolean; service?: boolean } = {}) =>
          sql<{ id: string }>`
            INSERT INTO users (tenant_id, email, nombre, role_id, active, is_service_account)
            VALUES (${tenantId}, ${email}, ${nombre}, 'r_user', ${fields.active ?? true}, ${fields.service ?? false})
            RETURNING id`.pipe(Effect.map((rows) => rows[0].id))
        const tag = crypto.randomUUID().slice(0, 6)
        const zoe = yield* insert("Zoe 100%", `zoe-${tag}@example.com`)
        const ana = yield* insert("Ana", `ana_${tag}@example.com`)
        yield* insert("Inactive", `inactive-${tag}@example.com`, { active: false })
        yield* insert("Robot", `robot-${tag}@example.com`, { service: true })
        const joined = yield* insert("Joined", `joined-${tag}@example.com`)
        yield* client.api.rooms.addParticipant({ params: { id: room.id }, payload: { user_id: joined } })
        const all = yield* client.api.rooms.invitableUsers({ params: { id: room.id }, query: {} })
        assert.deepStrictEqual(all.map((u) => u.nombre), ["Ana", "Zoe 100%"])
        assert.deepStrictEqual(all[0], { id: ana, nombre: "Ana", email: `ana_${tag}@example.com`, avatar_url: null })
        assert.deepStrictEqual(
          (yield* client.api.rooms.invitableUsers({ params: { id: room.id }, query: { q: "ZOE" } })).map((u) => u.id),
          [zoe]
        )
        assert.deepStrictEqual(
          (yield* client.api.rooms.invitableUsers({ params: { id: room.id }, query: { q: "%" } })).map((u) => u.id),
          [zoe]
        )
        assert.deepStrictEqual(
          (yield* client.api.rooms.invitableUsers({ params: { id: room.id }, query: { q: "_" } })).map((u) => u.id),
          [ana]
        )
        assert.deepStrictEqual(
          (yield* client.api.rooms.invitableUsers({ params: { id: room.id }, query: { q: "@EXAMPLE" } })).length,
          2
        )
        for (let i = 0; i < 55; i++) {
          yield* insert(`Member ${String(i).padStart(2, "0")}`, `member-${i}-${tag}@example.com`)
        }
        const capped = yield* client.api.rooms.invitableUsers({ params: { id: room.id }, query: {} })
        assert.strictEqual(capped.length, 50)
        assert.deepStrictEqual(capped.map((u) => u.nombre), [...capped.map((u) => u.nombre)].sort())
        const stranger = yield* person("Stranger", "r_user", client)
        const refused = yield* stranger.client.api.rooms.invitableUsers({ params: { id: room.id }, query: {} }).pipe(
          Effect.flip
        )
        assert.strictEqual(refused._tag, "NotParticipant")
      }).pipe(Effect.orDie))
  })

  describe("blocked users", () => {
    it.effect("are not invitable: left out of invitable-users, and an invitation is 404 as for a deactivated user", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded } = yield* roomSpace()
        const host = yield* person("Host")
        const blocked = yield* person("Blocked Guest")
        const deactivated = yield* person("Deactivated Guest")
        const guest = yield* person("Guest")
        yield* admin.api.admin.updateUser({ params: { id: blocked.id }, payload: { blocked: true } })
        yield* admin.api.admin.updateUser({ params: { id: deactivated.id }, payload: { active: false } })
        const room = yield* newRoom(host.client, seeded.blueprint_ids.ephemeral)
        const named = (q: string) =>
          Effect.map(
            host.client.api.rooms.invitableUsers({ params: { id: room.id }, query: { q } }),
            (users) => users.map((u) => u.id)
          )
        assert.deepStrictEqual(yield* named(blocked.email), [])
        assert.deepStrictEqual(yield* named(deactivated.email), [])
        assert.deepStrictEqual(yield* named(guest.email), [guest.id])
        const path = `/api/rooms/${room.id}/invite`
        const toDeactivated = yield* asUser(host.client, path, json("POST", { user_id: deactivated.id }))
        const toBlocked = yield* asUser(host.client, path, json("POST", { user_id: blocked.id }))
        assert.strictEqual(toBlocked.status, 404)
        assert.deepStrictEqual(
          { ...toBlocked.body, error: toBlocked.body.error.replace(blocked.id, "<id>") },
          { ...toDeactivated.body, error: toDeactivated.body.error.replace(deactivated.id, "<id>") }
        )
        // Added directly as a participant: the same 404.
        const added = yield* asUser(
          host.client,
          `/api/rooms/${room.id}/participants`,
          json("POST", { user_id: blocked.id })
        )
        assert.strictEqual(added.status, 404)
        const read = yield* host.client.api.rooms.get({ params: { id: room.id } })
        assert.isFalse(read.participants.some((p) => "user_id" in p && p.user_id === blocked.id))
        const sql = yield* SqlClient.SqlClient
        const notified = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM notifications WHERE user_id = ${blocked.id}`
        assert.strictEqual(notified[0].n, 0)
        // Unblocked, they are invitable again.
        yield* admin.api.admin.updateUser({ params: { id: blocked.id }, payload: { blocked: false } })
        assert.deepStrictEqual(yield* named(blocked.email), [blocked.id])
        const invited = yield* host.client.api.rooms.invite({
          params: { id: room.id },
          payload: { user_id: blocked.id }
        })
        assert.strictEqual(invited.invited, blocked.id)
      }).pipe(Effect.orDie))
  })

  describe("POST /api/chats/{id}/messages/append", () => {
    it.effect("201 {id, seq, created_at}; id and attribution come from the server, payload fields are ignored", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded, support } = yield* roomSpace()
        const author = yield* person("Author")
        const room = yield* newRoom(author.client, seeded.blueprint_ids.ephemeral)
        const forgedId = crypto.randomUUID()
        const answer = yield* appendRaw(author.client, room.chat_id, {
          content: "Deploy is stuck",
          user_id: crypto.randomUUID(),
          agent_id: support.id,
          role: "agent",
          id: forgedId
        })
        assert.strictEqual(answer.status, 201)
        assert.deepStrictEqual(Object.keys(answer.body).sort(), ["created_at", "id", "seq"])
        assert.strictEqual(answer.body.seq, 1)
        assert.notStrictEqual(answer.body.id, forgedId)
        const frame = yield* author.client.api.roomChats.poll({ params: { id: room.chat_id }, query: {} })
        assert.deepStrictEqual(frame.messages, [{
          id: answer.body.id,
          seq: 1,
          role: "user",
          user_id: author.id,
          author_name: "Author",
          content: "Deploy is stuck",
          created_at: answer.body.created_at
        }])
      }))

    it.effect("50 concurrent appends get seq 1..50, each once", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const people = yield* Effect.all([person("A"), person("B")])
        const room = yield* newRoom(people[0].client, seeded.blueprint_ids.ephemeral)
        yield* people[0].client.api.rooms.addParticipant({
          params: { id: room.id },
          payload: { user_id: people[1].id }
        })
        const appended = yield* Effect.all(
          Array.from({ length: 50 }, (_, i) =>
            people[i % 2].client.api.roomChats.append({
              params: { id: room.chat_id },
              payload: { content: `message ${i}` }
            })),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          appended.map((m) => m.seq).sort((a, b) => a - b),
          Array.from({ length: 50 }, (_, i) => i + 1)
        )
        const frame = yield* people[1].client.api.roomChats.poll({
          params: { id: room.chat_id },
          query: { limit: 100 }
        })
        assert.deepStrictEqual(frame.messages.map((m) => m.seq), Array.from({ length: 50 }, (_, i) => i + 1))
        assert.strictEqual(frame.cursor, 50)
      }))

    it.effect("400 empty, blank or oversize content and for a classic chat; 403 not a participant; 404 unknown chat; 409 closed", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const author = yield* person("Author")
        const stranger = yield* person("Stranger")
        const room = yield* newRoom(author.client, seeded.blueprint_ids.ephemeral)
        for (const content of ["", "   \n ", "x".repeat(16_001)]) {
          assert.strictEqual((yield* appendRaw(author.client, room.chat_id, { content })).status, 400)
        }
        assert.strictEqual((yield* appendRaw(author.client, room.chat_id, {})).status, 400)
        const refused = yield* appendRaw(stranger.client, room.chat_id, { content: "hi" })
        assert.strictEqual(refused.status, 403)
        assert.strictEqual((yield* appendRaw(author.client, crypto.randomUUID(), { content: "hi" })).status, 404)
        const sql = yield* SqlClient.SqlClient
        const [classic] = yield* sql<{ id: string }>`
          INSERT INTO chats (tenant_id, space_id) SELECT tenant_id, space_id FROM rooms WHERE id = ${room.id} RETURNING id`
        const notRoom = yield* appendRaw(author.client, classic.id, { content: "hi" })
        assert.strictEqual(notRoom.status, 400)
        assert.strictEqual(notRoom.body._tag, "NotRoomChat")
        const classicPoll = yield* asUser(author.client, `/api/chats/${classic.id}/messages`)
        assert.strictEqual(classicPoll.status, 400)
        // API keys cannot write into a room through the classic chat.
        const { key } = yield* createKey(["chat"])
        const throughChat = yield* http(
          "/v1/chat/completions",
          json("POST", { message: "hi", chat_id: room.chat_id }, bearer(key))
        )
        assert.strictEqual(throughChat.status, 404)
        assert.include(throughChat.body.error, "messages/append")
        yield* author.client.api.rooms.close({ params: { id: room.id } })
        const closed = yield* appendRaw(author.client, room.chat_id, { content: "too late" })
        assert.strictEqual(closed.status, 409)
      }).pipe(Effect.orDie))
  })

  describe("a room's chat through the API-key chat endpoints", () => {
    it.effect("GET /v1/chat/history answers 404 with the body of an unknown chat; completions do not continue it", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const author = yield* person("Author")
        const room = yield* newRoom(author.client, seeded.blueprint_ids.ephemeral)
        assert.strictEqual((yield* appendRaw(author.client, room.chat_id, { content: "room only" })).status, 201)
        const { key } = yield* createKey(["chat"])
        const unknownId = crypto.randomUUID()
        const unknown = yield* http(`/v1/chat/history/${unknownId}`, { headers: bearer(key) })
        const roomChat = yield* http(`/v1/chat/history/${room.chat_id}`, { headers: bearer(key) })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(roomChat.status, 404)
        assert.deepStrictEqual(
          roomChat.body,
          JSON.parse(JSON.stringify(unknown.body).replaceAll(unknownId, room.chat_id))
        )
        const throughChat = yield* http(
          "/v1/chat/completions",
          json("POST", { message: "hi", chat_id: room.chat_id }, bearer(key))
        )
        assert.strictEqual(throughChat.status, 404)
        // The room's chat still holds only what was appended through the room.
        const poll = yield* asUser(author.client, `/api/chats/${room.chat_id}/messages`)
        assert.deepStrictEqual(poll.body.messages.map((m: { content: string }) => m.content), ["room only"])
      }).pipe(Effect.orDie))
  })

  describe("GET /api/chats/{id}/messages (poll)", () => {
    it.effect("messages after the cursor, the participants' presence (the caller's updated), the room status; 403 for others", () =>
      Effect.gen(function*() {
        const { ana, bo, room } = yield* anaAndBoInARoom
        const empty = yield* ana.client.api.roomChats.poll({ params: { id: room.chat_id }, query: {} })
        assert.deepStrictEqual({ ...empty, presence: empty.presence.map((p) => [p.user_id, p.nombre, p.state]) }, {
          cursor: 0,
          messages: [],
          presence: [[ana.id, "Ana", "online"]],
          room_status: "open"
        })
        yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "one" } })
        yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "two" } })
        const bos = yield* bo.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { after: 1 } })
        assert.deepStrictEqual(bos.messages.map((m) => m.content), ["two"])
        assert.strictEqual(bos.cursor, 2)
        assert.deepStrictEqual(bos.presence.map((p) => [p.nombre, p.state]), [["Ana", "online"], ["Bo", "online"]])
        const stranger = yield* person("Stranger")
        assert.strictEqual((yield* asUser(stranger.client, `/api/chats/${room.chat_id}/messages`)).status, 403)
        assert.strictEqual((yield* asUser(ana.client, `/api/chats/${room.chat_id}/messages?wait=31`)).status, 400)
        assert.strictEqual((yield* asUser(ana.client, `/api/chats/${room.chat_id}/messages?after=-1`)).status, 400)
      }))

    it.effect("a long poll answers as soon as another participant appends", () =>
      Effect.gen(function*() {
        const { ana, bo, room } = yield* anaAndBoInARoom
        // Bo is online first, so Ana's wait is woken by the message, not by Bo's arrival.
        yield* bo.client.api.roomChats.poll({ params: { id: room.chat_id }, query: {} })
        const waiting = yield* ana.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { wait: 30 } })
          .pipe(Effect.forkChild)
        // Append until the waiting poll has answered: it may have started listening after the first append.
        const frame = yield* eventually(
          Effect.gen(function*() {
            yield* bo.client.api.roomChats.append({
              params: { id: room.chat_id },
              payload: { content: "are you there?" }
            })
            return yield* Fiber.await(waiting).pipe(Effect.timeoutOption("1 second"))
          }),
          (exit) => exit._tag === "Some"
        )
        assert.strictEqual(frame._tag, "Some")
        const result = frame._tag === "Some" && frame.value._tag === "Success" ? frame.value.value : undefined
        assert.isDefined(result)
        assert.strictEqual(result!.messages[0].content, "are you there?")
        const idle = yield* ana.client.api.roomChats.poll({
          params: { id: room.chat_id },
          query: { after: 1000, wait: 1 }
        })
        assert.deepStrictEqual(idle.messages, [])
      }))
  })
  describe("agents that take part", () => {
    /** The provenance rows of an action, as the compliance pack shows them (the admin is r_superadmin). */
    const provenanceOf = (admin: Sdk.Connected, actionId: string) =>
      Effect.gen(function*() {
        yield* admin.api.admin.updateFlags({ payload: { feature_compliance_pack: true } })
        return (yield* admin.api.compliance.provenance({ query: { action_id: actionId } })).rows
      })
    const agentMessages = (client: Sdk.Connected, chatId: string) =>
      Effect.map(
        client.api.roomChats.poll({ params: { id: chatId }, query: { limit: 500 } }),
        (frame) => frame.messages.filter((m) => m.role === "agent")
      ).pipe(Effect.orDie)

    /**
     * Ana's room with Bo and the Support agent, which has one action `name`
     * with the required `parameter`, in confirm mode, sending to a local target.
     */
    const confirmingRoom = (
      name: string,
      parameter: { readonly name: string; readonly type: "integer" | "string"; readonly description: string }
    ) =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded, support } = yield* roomSpace()
        const target = yield* localServer(() => jsonAnswer(200, { done: true }))
        const action = yield* admin.api.actionsAdmin.create({
          payload: {
            name,
            description: `${name} for a customer`,
            http_method: "POST",
            url: `${target.url}/${name}`,
            parameters: [{ ...parameter, required: true }],
            is_active: true,
            requires_confirmation: true
          }
        })
        yield* admin.api.agentsAdmin.assignActions({ params: { id: support.id }, payload: { action_ids: [action.id] } })
        const ana = yield* person("Ana")
        const bo = yield* person("Bo")
        const room = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
        yield* ana.client.api.rooms.addParticipant({ params: { id: room.id }, payload: { agent_id: support.id } })
        yield* ana.client.api.rooms.addParticipant({ params: { id: room.id }, payload: { user_id: bo.id } })
        return { action, admin, ana, bo, room, target }
      }).pipe(Effect.orDie)

    it.effect("an agent answers a message that mentions it; its actions run for that person as human_triggered_auto in the room's chat", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, seeded, support } = yield* roomSpace()
        const target = yield* localServer(() => jsonAnswer(201, { ticket_id: "T-9", status: "open" }))
        const action = yield* admin.api.actionsAdmin.create({ payload: ticketAction(target.url) })
        yield* admin.api.agentsAdmin.assignActions({ params: { id: support.id }, payload: { action_ids: [action.id] } })
        const ana = yield* person("Ana")
        const room = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
        yield* ana.client.api.rooms.addParticipant({ params: { id: room.id }, payload: { agent_id: support.id } })

        yield* ana.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "Nobody is called here." }
        })
        yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "@Support hello" } })
        const greeted = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 1)
        assert.deepInclude(greeted[0], { role: "agent", agent_id: support.id, author_name: "Support", seq: 3 })
        assert.match(greeted[0].content, /^Hello!/)

        yield* ana.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "@Support please create a ticket with title: Checkout is down, priority: high" }
        })
        const answered = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 2)
        assert.match(answered[1].content, /create_ticket succeeded/)
        assert.deepStrictEqual(JSON.parse(target.received[0].body), { title: "Checkout is down", priority: "high" })
        const sql = yield* SqlClient.SqlClient
        const executions = yield* sql<{ supervision: string; caller_kind: string; caller_id: string; chat_id: string }>`
          SELECT supervision, caller_kind, caller_id, chat_id FROM action_executions WHERE action_id = ${action.id}`
        assert.deepStrictEqual(executions, [{
          supervision: "human_triggered_auto",
          caller_kind: "user",
          caller_id: ana.id,
          chat_id: room.chat_id
        }])
        // The compliance pack reads it as the agent acting on Ana's room message.
        const [row] = yield* provenanceOf(admin, action.id)
        assert.deepInclude(row, {
          channel: "room",
          chat_id: room.chat_id,
          agent_id: support.id,
          supervision: "human_triggered_auto",
          confirmed_by: null
        })
        assert.deepStrictEqual(row.triggered_by, { type: "agent", id: support.id, name: "Support" })
        assert.deepStrictEqual(row.on_behalf_of, { type: "user", id: ana.id, name: "Ana" })
        // Only mentions were answered.
        assert.strictEqual((yield* agentMessages(ana.client, room.chat_id)).length, 2)
      }).pipe(Effect.orDie))

    it.effect("after asking its caller for confirmation, the agent takes their plain answer and runs the action as human_confirmed", () =>
      Effect.gen(function*() {
        const { action, admin, ana, bo, room, target } = yield* confirmingRoom("refund_order", {
          name: "order_id",
          type: "integer",
          description: "The order number"
        })
        yield* ana.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "@Support please refund order 1234" }
        })
        const asked = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 1)
        assert.match(asked[0].content, /^Please confirm: run refund_order with order_id: 1234\?/)
        // Someone else's "yes" is a message to the room, not an answer to the agent.
        yield* bo.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "yes" } })
        yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "yes, go ahead" } })
        const done = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 2)
        assert.match(done[1].content, /refund_order succeeded/)
        assert.strictEqual(target.received.length, 1)
        const sql = yield* SqlClient.SqlClient
        const executions = yield* sql<
          { supervision: string; caller_id: string; chat_id: string; confirmation_text: string }
        >`
          SELECT supervision, caller_id, chat_id, confirmation_text FROM action_executions WHERE action_id = ${action.id}`
        assert.deepStrictEqual(executions, [{
          supervision: "human_confirmed",
          caller_id: ana.id,
          chat_id: room.chat_id,
          confirmation_text: "yes, go ahead"
        }])
        const [row] = yield* provenanceOf(admin, action.id)
        assert.deepInclude(row, { channel: "room", chat_id: room.chat_id, supervision: "human_confirmed" })
        assert.deepStrictEqual(row.on_behalf_of, { type: "user", id: ana.id, name: "Ana" })
        assert.deepInclude(row.confirmed_by, { user_id: ana.id, name: "Ana", text: "yes, go ahead" })
        assert.match(row.confirmed_by?.asked ?? "", /^Please confirm: run refund_order with order_id: 1234\?/)
      }).pipe(Effect.orDie))

    it.effect("another participant's \"@Agent yes\" or \"no\" neither runs nor cancels the action: the question waits for its asker", () =>
      Effect.gen(function*() {
        const { action, admin, ana, bo, room, target } = yield* confirmingRoom("restart_server", {
          name: "server",
          type: "string",
          description: "The server's name"
        })
        const say = (who: typeof ana, content: string) =>
          who.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content } })
        yield* say(ana, "@Support please restart server with server: web-1")
        const asked = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 1)
        assert.match(asked[0].content, /^Please confirm: run restart_server with server: web-1\?/)

        // Bo mentions the agent: it answers him, and Ana's question is still hers to answer.
        yield* say(bo, "@Support yes")
        yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 2)
        yield* say(bo, "@Support no")
        const toBo = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 3)
        for (const message of toBo.slice(1)) {
          assert.notMatch(message.content, /restart_server succeeded|cancelled restart_server/)
        }
        // His own request would replace her question: the agent declines it until hers is settled.
        yield* say(bo, "@Support please restart server with server: db-2")
        const declined = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 4)
        assert.match(declined[3].content, /^I am waiting for someone else's answer about another action/)
        assert.strictEqual(target.received.length, 0)
        const sql = yield* SqlClient.SqlClient
        const pending = yield* sql<{ stage: string; params: unknown; asked_user_id: string }>`
          SELECT stage, params, asked_user_id FROM chat_pending_actions WHERE chat_id = ${room.chat_id}`
        assert.deepStrictEqual(pending, [{ stage: "confirming", params: { server: "web-1" }, asked_user_id: ana.id }])

        // Ana's plain "yes" still answers it, and the action runs as hers.
        yield* say(ana, "yes")
        const done = yield* eventually(agentMessages(ana.client, room.chat_id), (messages) => messages.length >= 5)
        assert.match(done[4].content, /restart_server succeeded/)
        assert.deepStrictEqual(JSON.parse(target.received[0].body), { server: "web-1" })
        assert.strictEqual(target.received.length, 1)
        const executions = yield* sql<{ supervision: string; caller_id: string; confirmation_text: string }>`
          SELECT supervision, caller_id, confirmation_text FROM action_executions WHERE action_id = ${action.id}`
        assert.deepStrictEqual(executions, [{
          supervision: "human_confirmed",
          caller_id: ana.id,
          confirmation_text: "yes"
        }])
        const [row] = yield* provenanceOf(admin, action.id)
        assert.deepStrictEqual(row.on_behalf_of, { type: "user", id: ana.id, name: "Ana" })
        assert.deepInclude(row.confirmed_by, { user_id: ana.id, name: "Ana", text: "yes" })
      }).pipe(Effect.orDie))
  })

  describe("POST /api/rooms/{id}/close", () => {
    it.effect("closes with minutes from the always-on agents, stored on the room and appended as their messages; again 409", () =>
      Effect.gen(function*() {
        const { seeded, ana, bo, room } = yield* anaAndBoInARoom
        const say = (who: typeof ana, content: string) =>
          who.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content } })
        yield* say(ana, "The checkout outage started at 9:00 right after the payment deploy.")
        yield* say(bo, "The payment deploy broke the checkout for card payments.")
        yield* say(bo, "We decided to roll back the payment deploy.")
        yield* say(ana, "I will write the postmortem by Friday.")
        yield* say(bo, "Ana will notify the affected customers?")
        yield* say(ana, "Bo will check the checkout dashboards tomorrow.")
        const stranger = yield* person("Stranger")
        const refused = yield* stranger.client.api.rooms.close({ params: { id: room.id } }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "NotParticipant")

        const closed = yield* bo.client.api.rooms.close({ params: { id: room.id } })
        assert.strictEqual(closed.status, "closed")
        assert.isString(closed.closed_at)
        const minutes = closed.minutes!
        assert.match(minutes.summary, /^6 messages from Ana and Bo\. Key points: /)
        assert.include(minutes.summary, "checkout")
        assert.deepStrictEqual(minutes.decisions, [
          { decision: "We decided to roll back the payment deploy.", owner: null },
          { decision: "I will write the postmortem by Friday.", owner: "Ana" },
          { decision: "Bo will check the checkout dashboards tomorrow.", owner: "Bo" }
        ])
        assert.deepStrictEqual(minutes.authors, [
          { agent_id: seeded.agent_ids.summary, name: "Summary", part: "summary" },
          { agent_id: seeded.agent_ids.decisions, name: "Decisions", part: "decisions" }
        ])
        assert.strictEqual(minutes.message_count, 6)
        assert.match(minutes.model, /^embedded-extractive-v\d+/)
        const frame = yield* ana.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { after: 6 } })
        assert.strictEqual(frame.room_status, "closed")
        assert.deepStrictEqual(frame.messages.map((m) => [m.seq, m.author_name]), [[7, "Summary"], [8, "Decisions"]])
        assert.strictEqual(frame.messages[0].content, `Summary: ${minutes.summary}`)
        assert.strictEqual(
          frame.messages[1].content,
          "Decisions:\n- We decided to roll back the payment deploy.\n- I will write the postmortem by Friday. (owner: Ana)\n- Bo will check the checkout dashboards tomorrow. (owner: Bo)"
        )
        assert.deepStrictEqual((yield* ana.client.api.rooms.get({ params: { id: room.id } })).minutes, minutes)
        const again = yield* asUser(ana.client, `/api/rooms/${room.id}/close`, { method: "POST" })
        assert.strictEqual(again.status, 409)
        assert.strictEqual(again.body._tag, "RoomClosed")
        assert.deepStrictEqual(yield* auditEvents("audit_logs", `room:${room.id}`), [
          "room.created",
          "room.participant_added",
          "room.closed"
        ])
      }))

    it.effect("a room without messages or always-on agents still gets minutes; 404 for an unknown room", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, space } = yield* roomSpace()
        const bare = yield* admin.api.blueprints.create({
          payload: { name: "Bare", lifecycle: "ephemeral", space_id: space.id }
        })
        const room = yield* newRoom(admin, bare.id)
        const closed = yield* admin.api.rooms.close({ params: { id: room.id } })
        assert.deepInclude(closed.minutes!, {
          summary: "The room closed without any messages.",
          decisions: [],
          authors: [],
          message_count: 0
        })
        const missing = yield* admin.api.rooms.close({ params: { id: crypto.randomUUID() } }).pipe(Effect.flip)
        assert.strictEqual(missing._tag, "NotFound")
      }))

    it.effect("a room left closed without minutes (its process stopped after the close) gets them from the jobs role, once", () =>
      Effect.gen(function*() {
        const { seeded, ana, bo, room } = yield* anaAndBoInARoom
        const other = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
        for (const chatId of [room.chat_id, other.chat_id]) {
          yield* ana.client.api.roomChats.append({
            params: { id: chatId },
            payload: { content: "We decided to roll back the payment deploy." }
          })
        }
        const sql = yield* SqlClient.SqlClient
        // What a close leaves when its process dies before the minutes: here one from before migration 0022
        // (nothing due: the migration, run again, makes it due now) and one whose lease ran out.
        yield* sql`
          UPDATE rooms SET status = 'closed', closed_at = now(), closed_by = ${bo.id}, minutes_due_at = NULL
          WHERE id = ${room.id}`
        yield* sql`
          UPDATE rooms SET status = 'closed', closed_at = now(), closed_by = ${bo.id}, minutes_due_at = now()
          WHERE id = ${other.id}`
        yield* roomAnswersAndMinutes

        for (const closed of [room, other]) {
          const recovered = yield* eventually(
            ana.client.api.rooms.get({ params: { id: closed.id } }),
            (read) => read.minutes !== null
          )
          assert.strictEqual(recovered.status, "closed")
          assert.deepInclude(recovered.minutes!, {
            decisions: [{ decision: "We decided to roll back the payment deploy.", owner: null }],
            message_count: 1
          })
          const frame = yield* ana.client.api.roomChats.poll({ params: { id: closed.chat_id }, query: { after: 1 } })
          assert.deepStrictEqual(frame.messages.map((m) => [m.seq, m.author_name]), [[2, "Summary"], [3, "Decisions"]])
          const [audited] = yield* sql<{ actor: string }>`
            SELECT actor FROM audit_logs WHERE target = ${`room:${closed.id}`} AND event = 'room.closed'`
          assert.strictEqual(audited.actor, `user:${bo.id}`)
        }
        const due =
          yield* sql`SELECT id FROM rooms WHERE id IN (${room.id}, ${other.id}) AND minutes_due_at IS NOT NULL`
        assert.strictEqual(due.length, 0)
      }).pipe(Effect.orDie))

    it.effect("a persistent room reopened while its close's minutes are still due gets them first, once; each period its own", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const ana = yield* person("Ana")
        const bo = yield* person("Bo")
        const ref = `standing-${crypto.randomUUID()}`
        const room = yield* newRoom(ana.client, seeded.blueprint_ids.persistent, ref)
        yield* ana.client.api.rooms.addParticipant({ params: { id: room.id }, payload: { user_id: bo.id } })
        yield* ana.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "We decided to roll back the payment deploy." }
        })
        const sql = yield* SqlClient.SqlClient
        // Bo's close is committed and its minutes are not stored yet: its process is still writing them, or
        // stopped (the jobs role would take them up when they fall due).
        yield* sql`
          UPDATE rooms SET status = 'closed', closed_at = now(), closed_by = ${bo.id},
            minutes_due_at = now() + interval '180 seconds'
          WHERE id = ${room.id}`

        const reopened = yield* asUser(ana.client, "/api/rooms", json("POST", { external_ref: ref }))
        assert.strictEqual(reopened.status, 200, JSON.stringify(reopened.body))
        assert.strictEqual(reopened.body.room.id, room.id)
        assert.strictEqual(reopened.body.room.status, "open")
        assert.isNull(reopened.body.room.minutes)
        // The closed period's minutes came first, as the close would have written them, and count as its own.
        const frame = yield* ana.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { after: 1 } })
        assert.strictEqual(frame.room_status, "open")
        assert.deepStrictEqual(frame.messages.map((m) => [m.seq, m.author_name]), [[2, "Summary"], [3, "Decisions"]])
        assert.strictEqual(
          frame.messages[1].content,
          "Decisions:\n- We decided to roll back the payment deploy."
        )
        assert.deepStrictEqual(yield* auditEvents("audit_logs", `room:${room.id}`), [
          "room.created",
          "room.participant_added",
          "room.closed",
          "room.reopened"
        ])
        const [closedBy] = yield* sql<{ actor: string }>`
          SELECT actor FROM audit_logs WHERE target = ${`room:${room.id}`} AND event = 'room.closed'`
        assert.strictEqual(closedBy.actor, `user:${bo.id}`)
        // The jobs role finds nothing left to write.
        const due = yield* sql`SELECT id FROM rooms WHERE id = ${room.id} AND minutes_due_at IS NOT NULL`
        assert.strictEqual(due.length, 0)

        // The next close's minutes cover the period since the reopen, not the room's whole chat.
        yield* bo.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "Ana will call the payment provider tomorrow." }
        })
        const closed = yield* bo.client.api.rooms.close({ params: { id: room.id } })
        assert.deepInclude(closed.minutes!, {
          decisions: [{ decision: "Ana will call the payment provider tomorrow.", owner: "Ana" }],
          message_count: 1
        })
        assert.match(closed.minutes!.summary, /^1 message from Bo\./)
      }).pipe(Effect.orDie))
  })
})

/**
 * An OpenAI-compatible model on loopback that writes minutes: the summary
 * and the decisions as the prompt asks for them. While `hold` is on, it keeps
 * its answers until `release`.
 */
class MinutesModel extends Context.Service<MinutesModel, {
  readonly url: string
  readonly hold: Effect.Effect<void>
  /** Waits until a completion is held. */
  readonly held: Effect.Effect<void>
  readonly release: Effect.Effect<void>
}>()("test/MinutesModel") {
  static readonly layer = Layer.effect(
    MinutesModel,
    Effect.acquireRelease(
      Effect.callback<{ readonly model: MinutesModel["Service"]; readonly close: () => void }>((resume) => {
        let holding = false
        const waiting: Array<() => void> = []
        const heldWaiters: Array<() => void> = []
        const completion = (prompt: string) => ({
          id: "chatcmpl-minutes",
          model: "gpt-test",
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: prompt.includes("List every decision")
                ? "- Roll back the payment deploy (owner: Bo)"
                : "The checkout broke after the payment deploy, which is being rolled back."
            },
            finish_reason: "stop"
          }],
          usage: { prompt_tokens: 10, completion_tokens: 10 }
        })
        const server = createServer((req, res: ServerResponse) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")
            const answer = () =>
              res.writeHead(200, { "content-type": "application/json" }).end(
                JSON.stringify(completion(JSON.stringify(body.messages ?? [])))
              )
            if (!holding) return answer()
            waiting.push(answer)
            heldWaiters.splice(0).forEach((wake) => wake())
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
          resume(Effect.succeed({
            model: {
              url,
              hold: Effect.sync(() => {
                holding = true
              }),
              held: Effect.callback<void>((wake) => {
                if (waiting.length > 0) wake(Effect.void)
                else heldWaiters.push(() => wake(Effect.void))
              }),
              release: Effect.sync(() => {
                holding = false
                waiting.splice(0).forEach((answer) => answer())
              })
            },
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          }))
        })
      }),
      ({ close }) => Effect.sync(close)
    ).pipe(Effect.map(({ model }) => model))
  )
}

/** The test server with MinutesModel as its hosted model. */
const withMinutesModel = Layer.unwrap(Effect.gen(function*() {
  const model = yield* MinutesModel
  return testServer({ OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: "test-key" })
})).pipe(Layer.provideMerge(MinutesModel.layer))

layer(withMinutesModel, serverSuite)("work rooms with a hosted model", (it) => {
  describe("POST /api/rooms/{id}/close", () => {
    it.effect("a client that goes away once the room is closed does not stop its minutes", () =>
      Effect.gen(function*() {
        const model = yield* MinutesModel
        const { ana, bo, room } = yield* anaAndBoInARoom
        yield* bo.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "We decided to roll back the payment deploy." }
        })
        yield* model.hold
        const closing = yield* Effect.forkChild(bo.client.api.rooms.close({ params: { id: room.id } }))
        // The model is writing the minutes: the close is committed.
        yield* model.held
        yield* Fiber.interrupt(closing)
        // Time for the server to see the client gone (and, were the close interruptible, to stop it).
        yield* Effect.sleep("500 millis")
        yield* model.release

        const read = yield* eventually(
          ana.client.api.rooms.get({ params: { id: room.id } }),
          (read) => read.minutes !== null
        )
        assert.strictEqual(read.status, "closed")
        assert.deepInclude(read.minutes!, {
          summary: "The checkout broke after the payment deploy, which is being rolled back.",
          decisions: [{ decision: "Roll back the payment deploy", owner: "Bo" }],
          message_count: 1
        })
        const frame = yield* ana.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { after: 1 } })
        assert.deepStrictEqual(frame.messages.map((m) => [m.seq, m.author_name]), [[2, "Summary"], [3, "Decisions"]])
      }).pipe(Effect.orDie))
  })
})
