/**
 * Agents (spec: `GET /v1/agents`, `GET /v1/agents/{id}`; issue #4: the
 * `/api/admin/agents` catalog), through the SDK against the test server.
 */
import type * as Sdk from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { newAction, newSpace } from "./Catalog.ts"
import {
  adminClient,
  createKey,
  http,
  json,
  keyClient,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  sessionCookie,
  signIn
} from "./TestServer.ts"

const newAgent = (
  spaceId: string,
  fields: { readonly name?: string; readonly is_primary?: boolean } = {},
  client?: Sdk.Connected
) =>
  Effect.gen(function*() {
    const as = client ?? (yield* adminClient)
    return yield* as.api.agentsAdmin.create({
      payload: {
        space_id: spaceId,
        name: fields.name ?? "Helper",
        summary: "Helps",
        is_primary: fields.is_primary ?? false
      }
    })
  }).pipe(Effect.orDie)

const namedAction = (name: string, isActive = true) =>
  newAction({ name, description: `${name} description`, url: "https://example.com/x", is_active: isActive })

const auditEvents = (target: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ event: string }>`SELECT event FROM admin_audit_log WHERE target = ${target} ORDER BY seq`
    return rows.map((row) => row.event)
  }).pipe(Effect.orDie)

/** A Space Admin of `spaceId`, signed in. */
const spaceAdminOf = (spaceId: string) =>
  Effect.gen(function*() {
    const as = yield* adminClient
    const email = `space-admin-${crypto.randomUUID().slice(0, 8)}@example.com`
    const password = "Space-Admin-Passw0rd"
    const user = yield* as.api.admin.createUser({
      payload: { email, nombre: "Space Admin", password, role_id: "r_user" }
    })
    yield* as.api.spaceAdmin.assign({ payload: { user_id: user.id, space_id: spaceId } })
    return yield* signIn(email, password)
  }).pipe(Effect.orDie)

layer(testServer(), serverSuite)("agents", (it) => {
  describe("GET /v1/agents", () => {
    it.effect("lists the tenant's agents with their space's id and code", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const primary = yield* newAgent(space.id, { name: "Front desk", is_primary: true })
        const other = yield* newAgent(space.id, { name: "Billing" })
        const { key } = yield* createKey(["agents:read"])
        const client = yield* keyClient(key)
        const { agents } = yield* client.api.agents.list({ query: {} })
        const mine = agents.filter((a) => a.group_id === space.id)
        assert.deepStrictEqual(mine, [
          {
            id: primary.id,
            name: "Front desk",
            summary: "Helps",
            is_primary: true,
            group_id: space.id,
            space_code: space.code
          },
          {
            id: other.id,
            name: "Billing",
            summary: "Helps",
            is_primary: false,
            group_id: space.id,
            space_code: space.code
          }
        ])
      }))

    it.effect("filters by a space given by id or by code; an unknown space has no agents", () =>
      Effect.gen(function*() {
        const a = yield* newSpace()
        const b = yield* newSpace()
        const inA = yield* newAgent(a.id)
        yield* newAgent(b.id)
        const { key } = yield* createKey(["agents"])
        const client = yield* keyClient(key)
        const byId = yield* client.api.agents.list({ query: { space: a.id } })
        const byCode = yield* client.api.agents.list({ query: { space: a.code } })
        assert.deepStrictEqual(byId.agents.map((x) => x.id), [inA.id])
        assert.deepStrictEqual(byCode, byId)
        const unknown = yield* client.api.agents.list({ query: { space: "no-such-space" } })
        assert.deepStrictEqual(unknown.agents, [])
        const nul = yield* http("/v1/agents?space=%00", { headers: { authorization: `Bearer ${key}` } })
        assert.strictEqual(nul.status, 400)
        assert.match(nul.body.error, /^Invalid query parameter: space/)
      }))

    it.effect("401 without a key, 403 naming the scopes for a key without agents scope", () =>
      Effect.gen(function*() {
        const none = yield* http("/v1/agents")
        assert.strictEqual(none.status, 401)
        const { key } = yield* createKey(["chat"])
        const client = yield* keyClient(key)
        const error = yield* client.api.agents.list({ query: {} }).pipe(Effect.flip)
        assert.strictEqual(error._tag, "ScopeMissing")
        assert.match(messageOf(error), /`agents` or `agents:read`/)
      }))

    it.effect("another tenant's agents are neither listed nor readable (404)", () =>
      Effect.gen(function*() {
        const other = yield* secondTenant()
        const theirSpace = yield* newSpace(other.client)
        const theirs = yield* newAgent(theirSpace.id, {}, other.client)
        const { key } = yield* createKey(["agents"])
        const client = yield* keyClient(key)
        const { agents } = yield* client.api.agents.list({ query: {} })
        assert.isFalse(agents.some((a) => a.id === theirs.id))
        const bySpace = yield* client.api.agents.list({ query: { space: theirSpace.id } })
        assert.deepStrictEqual(bySpace.agents, [])
        const error = yield* client.api.agents.get({ params: { id: theirs.id } }).pipe(Effect.flip)
        assert.strictEqual(error._tag, "NotFound")
      }))
  })

  describe("GET /v1/agents/{id}", () => {
    it.effect("returns the agent with its active actions and its knowledge files", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const agent = yield* newAgent(space.id, { name: "Ops", is_primary: true })
        const active = yield* namedAction("restart-server")
        const inactive = yield* namedAction("old-thing", false)
        const as = yield* adminClient
        yield* as.api.agentsAdmin.assignActions({
          params: { id: agent.id },
          payload: { action_ids: [active.id, inactive.id] }
        })
        const sql = yield* SqlClient.SqlClient
        const [file] = yield* sql<{ id: string }>`
          INSERT INTO knowledge_files (tenant_id, agent_id, filename, content, content_summary, status, size_bytes)
          SELECT tenant_id, id, 'runbook.md', '# Runbook', 'How to restart', 'ready', 9 FROM agents WHERE id = ${agent.id}
          RETURNING id`
        const { key } = yield* createKey(["agents:read"])
        const client = yield* keyClient(key)
        const detail = yield* client.api.agents.get({ params: { id: agent.id } })
        assert.deepStrictEqual(detail, {
          id: agent.id,
          name: "Ops",
          summary: "Helps",
          is_primary: true,
          group_id: space.id,
          space_code: space.code,
          actions: [{ id: active.id, name: "restart-server", description: "restart-server description" }],
          knowledge_files: [{ id: file.id, filename: "runbook.md", content_summary: "How to restart", status: "ready" }]
        })
      }))

    it.effect("404 for an unknown or malformed id", () =>
      Effect.gen(function*() {
        const { key } = yield* createKey(["agents"])
        const client = yield* keyClient(key)
        for (const id of [crypto.randomUUID(), "not-an-id"]) {
          const error = yield* client.api.agents.get({ params: { id } }).pipe(Effect.flip)
          assert.strictEqual(error._tag, "NotFound", id)
        }
      }))
  })

  describe("POST /api/admin/agents", () => {
    it.effect("creates an agent (201), audited; a tenant_id in the body has no effect", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const as = yield* adminClient
        const response = yield* http(
          "/api/admin/agents",
          json("POST", {
            space_id: space.id,
            name: "Concierge",
            summary: "Greets",
            is_primary: false,
            always_on: true,
            instructions: "Be kind",
            tenant_id: "00000000-0000-0000-0000-000000000000"
          }, { cookie: yield* sessionCookie(as) })
        )
        assert.strictEqual(response.status, 201)
        assert.deepInclude(response.body, {
          space_id: space.id,
          space_code: space.code,
          name: "Concierge",
          summary: "Greets",
          is_primary: false,
          always_on: true,
          instructions: "Be kind",
          action_ids: []
        })
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ tenant_id: string; space_tenant: string }>`
          SELECT a.tenant_id, s.tenant_id AS space_tenant FROM agents a JOIN spaces s ON s.id = a.space_id WHERE a.id = ${response.body.id}`
        assert.strictEqual(row.tenant_id, row.space_tenant)
        assert.deepStrictEqual(yield* auditEvents(`agent:${response.body.id}`), ["agent.created"])
      }))

    it.effect("one primary agent per space: a new primary unsets the old one, on create and on update", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const otherSpace = yield* newSpace()
        const first = yield* newAgent(space.id, { is_primary: true })
        const elsewhere = yield* newAgent(otherSpace.id, { is_primary: true })
        const second = yield* newAgent(space.id, { is_primary: true })
        assert.isTrue(second.is_primary)
        const as = yield* adminClient
        const primaries = () =>
          Effect.map(
            as.api.agentsAdmin.list({ query: {} }),
            ({ agents }) => agents.filter((a) => a.is_primary).map((a) => a.id)
          )
        let current = yield* primaries()
        assert.includeMembers(current, [second.id, elsewhere.id])
        assert.notInclude(current, first.id)
        const updated = yield* as.api.agentsAdmin.update({ params: { id: first.id }, payload: { is_primary: true } })
        assert.isTrue(updated.is_primary)
        current = yield* primaries()
        assert.includeMembers(current, [first.id, elsewhere.id])
        assert.notInclude(current, second.id)
      }))

    it.effect("concurrent new primaries leave exactly one primary agent in the space, and none fails", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const created = yield* Effect.forEach(
          Array.from({ length: 6 }, (_, i) => i),
          (i) => newAgent(space.id, { name: `Primary ${i}`, is_primary: true }),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(created.length, 6)
        const as = yield* adminClient
        const { agents } = yield* as.api.agentsAdmin.list({ query: { space_id: space.id } })
        assert.strictEqual(agents.length, 6)
        assert.strictEqual(agents.filter((a) => a.is_primary).length, 1)
      }))

    it.effect("400 names the invalid field; an unknown or foreign space is 404", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const cookie = yield* sessionCookie(as)
        const space = yield* newSpace()
        const bad = yield* http(
          "/api/admin/agents",
          json("POST", { space_id: space.id, name: "", summary: "x", is_primary: false }, { cookie })
        )
        assert.strictEqual(bad.status, 400)
        assert.match(bad.body.error, /name/)
        const nul = yield* http(
          "/api/admin/agents",
          json("POST", { space_id: space.id, name: "a\u0000b", summary: "x", is_primary: false }, { cookie })
        )
        assert.strictEqual(nul.status, 400)
        assert.match(nul.body.error, /^Invalid request body: name: must not contain NUL/)
        const missing = yield* http("/api/admin/agents", json("POST", { space_id: space.id, summary: "x" }, { cookie }))
        assert.strictEqual(missing.status, 400)
        assert.match(missing.body.error, /^Invalid request body: name: Missing key/)
        for (const spaceId of [crypto.randomUUID(), "not-a-space"]) {
          const error = yield* as.api.agentsAdmin.create({
            payload: { space_id: spaceId, name: "x", summary: "", is_primary: false }
          }).pipe(
            Effect.flip
          )
          assert.strictEqual(error._tag, "NotFound")
        }
        const other = yield* secondTenant()
        const theirSpace = yield* newSpace(other.client)
        const foreign = yield* as.api.agentsAdmin.create({
          payload: { space_id: theirSpace.id, name: "x", summary: "", is_primary: false }
        }).pipe(
          Effect.flip
        )
        assert.strictEqual(foreign._tag, "NotFound")
      }))

    it.effect("401 without a session; 403 for a user who is neither admin nor Space Admin", () =>
      Effect.gen(function*() {
        const anonymous = yield* http("/api/admin/agents")
        assert.strictEqual(anonymous.status, 401)
        const as = yield* adminClient
        yield* as.api.admin.createUser({
          payload: { email: "agents-user@example.com", nombre: "U", password: "Correct-Horse-9", role_id: "r_user" }
        })
        const user = yield* signIn("agents-user@example.com", "Correct-Horse-9")
        const error = yield* user.api.agentsAdmin.list({ query: {} }).pipe(Effect.flip)
        assert.strictEqual(error._tag, "RoleMissing")
      }))
  })

  describe("PATCH and DELETE /api/admin/agents/{id}", () => {
    it.effect("updates the given fields only, audited", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const agent = yield* newAgent(space.id, { name: "Before" })
        const as = yield* adminClient
        const updated = yield* as.api.agentsAdmin.update({
          params: { id: agent.id },
          payload: { name: "After", instructions: null }
        })
        assert.deepStrictEqual({ ...updated }, { ...agent, name: "After" })
        assert.deepStrictEqual(yield* auditEvents(`agent:${agent.id}`), ["agent.created", "agent.updated"])
      }))

    it.effect("deletes the agent with its knowledge files and action assignments; then 404", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const agent = yield* newAgent(space.id)
        const action = yield* namedAction("lookup")
        const as = yield* adminClient
        yield* as.api.agentsAdmin.assignActions({ params: { id: agent.id }, payload: { action_ids: [action.id] } })
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          INSERT INTO knowledge_files (tenant_id, agent_id, filename, content, size_bytes)
          SELECT tenant_id, id, 'a.txt', 'a', 1 FROM agents WHERE id = ${agent.id}`
        const deleted = yield* as.api.agentsAdmin.delete({ params: { id: agent.id } })
        assert.isTrue(deleted.success)
        const [left] = yield* sql<{ files: number; assignments: number }>`
          SELECT (SELECT count(*)::int FROM knowledge_files WHERE agent_id = ${agent.id}) AS files,
                 (SELECT count(*)::int FROM agent_actions WHERE agent_id = ${agent.id}) AS assignments`
        assert.deepStrictEqual(left, { files: 0, assignments: 0 })
        const again = yield* as.api.agentsAdmin.delete({ params: { id: agent.id } }).pipe(Effect.flip)
        assert.strictEqual(again._tag, "NotFound")
        // The action itself stays in the catalog.
        const { actions } = yield* as.api.actionsAdmin.list()
        assert.isTrue(actions.some((a) => a.id === action.id))
        assert.deepStrictEqual(yield* auditEvents(`agent:${agent.id}`), [
          "agent.created",
          "agent.actions_assigned",
          "agent.deleted"
        ])
      }))

    it.effect("another tenant's agent is 404 to PATCH, DELETE and PUT actions", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const agent = yield* newAgent(space.id)
        const other = yield* secondTenant()
        const update = yield* other.client.api.agentsAdmin.update({
          params: { id: agent.id },
          payload: { name: "Mine now" }
        }).pipe(Effect.flip)
        const remove = yield* other.client.api.agentsAdmin.delete({ params: { id: agent.id } }).pipe(Effect.flip)
        const assign = yield* other.client.api.agentsAdmin.assignActions({
          params: { id: agent.id },
          payload: { action_ids: [] }
        }).pipe(Effect.flip)
        assert.deepStrictEqual([update._tag, remove._tag, assign._tag], ["NotFound", "NotFound", "NotFound"])
        const { key } = yield* createKey(["agents"])
        const client = yield* keyClient(key)
        assert.strictEqual((yield* client.api.agents.get({ params: { id: agent.id } })).name, "Helper")
      }))
  })

  describe("PUT /api/admin/agents/{id}/actions", () => {
    it.effect("an agent deleted while its actions are being assigned answers 409 (foreign key), not 500", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const agent = yield* newAgent(space.id)
        const action = yield* namedAction("vanishing-agent-action")
        const as = yield* adminClient
        const sql = yield* SqlClient.SqlClient
        // Another request deletes the agent between the handler's check and its insert: a trigger does it here.
        const trigger = `delete_agent_${agent.id.replaceAll("-", "_")}`
        yield* sql.unsafe(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN DELETE FROM agents WHERE id = NEW.agent_id; RETURN NEW; END $$`)
        yield* sql.unsafe(`CREATE TRIGGER ${trigger} BEFORE INSERT ON agent_actions FOR EACH ROW
          WHEN (NEW.agent_id = '${agent.id}') EXECUTE FUNCTION ${trigger}()`)
        const answer = yield* http(
          `/api/admin/agents/${agent.id}/actions`,
          json("PUT", { action_ids: [action.id] }, { cookie: yield* sessionCookie(as) })
        ).pipe(
          Effect.ensuring(Effect.orDie(Effect.andThen(
            sql.unsafe(`DROP TRIGGER ${trigger} ON agent_actions`),
            sql.unsafe(`DROP FUNCTION ${trigger}()`)
          )))
        )
        assert.strictEqual(answer.status, 409, JSON.stringify(answer.body))
        assert.strictEqual(answer.body._tag, "Conflict")
        assert.match(answer.body.error, /deleted by another request while it ran/)
      }))

    it.effect("replaces the agent's actions; unknown action ids are a 400 naming them", () =>
      Effect.gen(function*() {
        const space = yield* newSpace()
        const agent = yield* newAgent(space.id)
        const a = yield* namedAction("a-action")
        const b = yield* namedAction("b-action")
        const as = yield* adminClient
        const first = yield* as.api.agentsAdmin.assignActions({
          params: { id: agent.id },
          payload: { action_ids: [a.id, b.id, a.id] }
        })
        assert.sameMembers([...first.action_ids], [a.id, b.id])
        const second = yield* as.api.agentsAdmin.assignActions({
          params: { id: agent.id },
          payload: { action_ids: [b.id] }
        })
        assert.deepStrictEqual(second.action_ids, [b.id])
        const unknownId = crypto.randomUUID()
        const error = yield* as.api.agentsAdmin.assignActions({
          params: { id: agent.id },
          payload: { action_ids: [a.id, unknownId, "bogus"] }
        }).pipe(
          Effect.flip
        )
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.include(messageOf(error), unknownId)
        assert.include(messageOf(error), "bogus")
        assert.notInclude(messageOf(error), a.id)
        // Nothing changed.
        const { agents } = yield* as.api.agentsAdmin.list({ query: { space_id: space.id } })
        assert.deepStrictEqual(agents[0].action_ids, [b.id])
        // Another tenant's action is unknown here.
        const other = yield* secondTenant()
        const theirs = yield* other.client.api.actionsAdmin.create({
          payload: {
            name: "theirs",
            description: "",
            http_method: "GET",
            url: "https://example.com",
            parameters: [],
            is_active: true
          }
        })
        const foreign = yield* as.api.agentsAdmin.assignActions({
          params: { id: agent.id },
          payload: { action_ids: [theirs.id] }
        }).pipe(Effect.flip)
        assert.strictEqual(foreign._tag, "InvalidRequest")
      }))
  })

  describe("Space Admins", () => {
    it.effect("see and manage the agents of their spaces only: 404 for another space's agent or an unknown space, 403 for another space", () =>
      Effect.gen(function*() {
        const mine = yield* newSpace()
        const notMine = yield* newSpace()
        const ownAgent = yield* newAgent(mine.id)
        const foreignAgent = yield* newAgent(notMine.id, { name: "Not yours" })
        const spaceAdmin = yield* spaceAdminOf(mine.id)

        const listed = yield* spaceAdmin.api.agentsAdmin.list({ query: {} })
        assert.deepStrictEqual(listed.agents.map((a) => a.id), [ownAgent.id])

        const created = yield* spaceAdmin.api.agentsAdmin.create({
          payload: { space_id: mine.id, name: "New", summary: "", is_primary: true }
        })
        assert.strictEqual(created.space_id, mine.id)
        const updated = yield* spaceAdmin.api.agentsAdmin.update({
          params: { id: ownAgent.id },
          payload: { summary: "Updated" }
        })
        assert.strictEqual(updated.summary, "Updated")

        const createElsewhere = yield* spaceAdmin.api.agentsAdmin.create({
          payload: { space_id: notMine.id, name: "x", summary: "", is_primary: false }
        })
          .pipe(Effect.flip)
        assert.strictEqual(createElsewhere._tag, "AccessDenied")
        assert.match(messageOf(createElsewhere), /^You are Space Admin of another space, not of /)
        const listElsewhere = yield* spaceAdmin.api.agentsAdmin.list({ query: { space_id: notMine.id } }).pipe(
          Effect.flip
        )
        assert.strictEqual(listElsewhere._tag, "AccessDenied")
        // A space the tenant does not have (or another tenant's) is unknown to a Space Admin as to an administrator.
        const unknownSpace = crypto.randomUUID()
        const createNowhere = yield* spaceAdmin.api.agentsAdmin.create({
          payload: { space_id: unknownSpace, name: "x", summary: "", is_primary: false }
        }).pipe(Effect.flip)
        assert.strictEqual(createNowhere._tag, "NotFound")
        const listNowhere = yield* spaceAdmin.api.agentsAdmin.list({ query: { space_id: unknownSpace } })
        assert.deepStrictEqual(listNowhere.agents, [])
        const update = yield* spaceAdmin.api.agentsAdmin.update({
          params: { id: foreignAgent.id },
          payload: { name: "Taken" }
        }).pipe(Effect.flip)
        const remove = yield* spaceAdmin.api.agentsAdmin.delete({ params: { id: foreignAgent.id } }).pipe(Effect.flip)
        const assign = yield* spaceAdmin.api.agentsAdmin.assignActions({
          params: { id: foreignAgent.id },
          payload: { action_ids: [] }
        }).pipe(
          Effect.flip
        )
        assert.deepStrictEqual([update._tag, remove._tag, assign._tag], ["NotFound", "NotFound", "RoleMissing"])
        // Assigning actions decides what the space's keys may execute: administrators only, even for the Space
        // Admin's own agent (any action of the tenant's catalog would otherwise be theirs to run).
        const assignOwn = yield* spaceAdmin.api.agentsAdmin.assignActions({
          params: { id: ownAgent.id },
          payload: { action_ids: [] }
        }).pipe(Effect.flip)
        assert.strictEqual(assignOwn._tag, "RoleMissing")
        assert.match(messageOf(assignOwn), /administrator/)
        const as = yield* adminClient
        const assigned = yield* as.api.agentsAdmin.assignActions({
          params: { id: ownAgent.id },
          payload: { action_ids: [] }
        })
        assert.deepStrictEqual(assigned.action_ids, [])
        const { agents } = yield* as.api.agentsAdmin.list({ query: { space_id: notMine.id } })
        assert.deepStrictEqual(agents.map((a) => a.name), ["Not yours"])
      }))
  })
})
