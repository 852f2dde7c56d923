/**
 * Every write that replaces a set (or a whole record), run 20 times at once
 * (issue #8, item 5): no 5xx, and what a later read shows is exactly one of
 * the writes, never a mixture. The writes: an agent's actions, the password
 * policy, the tenant flags, a tenant secret, Space Admin assignments and IP
 * allowlist rules.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newAction } from "./Catalog.ts"
import { adminClient, http, json, layer as testServer, serverSuite, sessionCookie } from "./TestServer.ts"

const times = 20

/** Runs `request` `times` times at once and returns the statuses. */
const together = <A, R>(count: number, request: (i: number) => Effect.Effect<A, never, R>) =>
  Effect.forEach(Array.from({ length: count }, (_, i) => i), request, { concurrency: "unbounded" })

const raw = (method: string, path: string, body: unknown) =>
  Effect.gen(function*() {
    const cookie = yield* sessionCookie(yield* adminClient)
    return yield* http(path, json(method, body, { cookie }))
  })

layer(testServer(), serverSuite)("concurrent replacements", (it) => {
  describe("PUT /api/admin/agents/{id}/actions", () => {
    it.effect("20 identical PUTs all answer 200 and leave exactly that set", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const space = yield* admin.api.admin.createSpace({
          payload: { code: `c-${crypto.randomUUID().slice(0, 8)}`, name: "C" }
        })
        const agent = yield* admin.api.agentsAdmin.create({
          payload: { space_id: space.id, name: "A", summary: "", is_primary: false }
        })
        const actions = yield* Effect.forEach([1, 2, 3], () => newAction({ url: "https://example.com/x" }))
        const ids = actions.map((action) => action.id)
        const responses = yield* together(times, () =>
          raw("PUT", `/api/admin/agents/${agent.id}/actions`, { action_ids: ids }))
        assert.deepStrictEqual([
          ...new Set(responses.map((r) =>
            r.status
          ))
        ], [200])
        const { agents } = yield* admin.api.agentsAdmin.list({ query: { space_id: space.id } })
        assert.sameMembers([...agents[0].action_ids], ids)
      }))

    it.effect("20 different PUTs leave exactly one of the sets, never a merge", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const space = yield* admin.api.admin.createSpace({
          payload: { code: `c-${crypto.randomUUID().slice(0, 8)}`, name: "C" }
        })
        const agent = yield* admin.api.agentsAdmin.create({
          payload: { space_id: space.id, name: "A", summary: "", is_primary: false }
        })
        const actions = yield* Effect.forEach([1, 2, 3, 4], () => newAction({ url: "https://example.com/x" }))
        const sets = Array.from({ length: times }, (_, i) => [actions[i % 4].id, actions[(i + 1) % 4].id])
        const responses = yield* together(times, (i) =>
          raw("PUT", `/api/admin/agents/${agent.id}/actions`, { action_ids: sets[i] }))
        assert.deepStrictEqual([
          ...new Set(responses.map((r) =>
            r.status
          ))
        ], [200])
        const { agents } = yield* admin.api.agentsAdmin.list({ query: { space_id: space.id } })
        const final = [...agents[0].action_ids].sort()
        assert.isTrue(
          sets.some((set) => JSON.stringify([...set].sort()) === JSON.stringify(final)),
          JSON.stringify(final)
        )
      }))
  })

  describe("PUT /api/security/password-policy", () => {
    it.effect("20 different policies at once: all 200, and the stored one is one of them", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const base = yield* admin.api.security.getPasswordPolicy()
        const policies = Array.from(
          { length: times },
          (_, i) => ({ ...base, min_length: 12 + i, lockout_minutes: 15 + i })
        )
        const responses = yield* together(times, (i) => raw("PUT", "/api/security/password-policy", policies[i]))
        assert.deepStrictEqual([...new Set(responses.map((r) => r.status))], [200])
        const stored = yield* admin.api.security.getPasswordPolicy()
        assert.isTrue(
          policies.some((p) => p.min_length === stored.min_length && p.lockout_minutes === stored.lockout_minutes)
        )
        yield* admin.api.security.updatePasswordPolicy({ payload: base })
      }))
  })

  describe("PUT /api/admin/tenant/flags", () => {
    it.effect("20 flag sets at once: all 200, and the flags are one of them", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const sets = Array.from(
          { length: times },
          (_, i) => ({ feature_war_rooms: i % 2 === 0, feature_compliance_pack: i % 2 === 0 })
        )
        const responses = yield* together(times, (i) => raw("PUT", "/api/admin/tenant/flags", sets[i]))
        assert.deepStrictEqual([...new Set(responses.map((r) => r.status))], [200])
        const flags = yield* admin.api.admin.getFlags()
        assert.strictEqual(flags.feature_war_rooms, flags.feature_compliance_pack)
      }))
  })

  describe("PUT /api/admin/secrets/{name}", () => {
    it.effect("20 first writes of one secret at once: all 200, one secret listed", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const name = `SECRET_${crypto.randomUUID().slice(0, 8).toUpperCase()}`
        const responses = yield* together(
          times,
          (i) => raw("PUT", `/api/admin/secrets/${name}`, { value: `value-${i}` })
        )
        assert.deepStrictEqual([...new Set(responses.map((r) => r.status))], [200])
        const { secrets } = yield* admin.api.actionsAdmin.listSecrets()
        assert.strictEqual(secrets.filter((s) => s.name === name).length, 1)
      }))
  })

  describe("POST /api/space-admin/assignments", () => {
    it.effect("20 identical assignments at once: all 200 with the same assignment", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const user = yield* admin.api.admin.createUser({
          payload: {
            email: `sa-${crypto.randomUUID().slice(0, 8)}@example.com`,
            nombre: "SA",
            password: "Correct-Horse-9",
            role_id: "r_user"
          }
        })
        const space = yield* admin.api.admin.createSpace({
          payload: { code: `c-${crypto.randomUUID().slice(0, 8)}`, name: "C" }
        })
        const responses = yield* together(times, () =>
          raw("POST", "/api/space-admin/assignments", { user_id: user.id, space_id: space.id }))
        assert.deepStrictEqual([
          ...new Set(responses.map((r) =>
            r.status
          ))
        ], [200])
        assert.strictEqual(new Set(responses.map((r) => r.body.id)).size, 1)
        const { assignments } = yield* admin.api.spaceAdmin.list()
        assert.strictEqual(assignments.filter((a) => a.user_id === user.id).length, 1)
      }))
  })

  describe("POST /api/security/ip-allowlist", () => {
    it.effect("20 identical rules at once: one 201, the others 409, one rule listed", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const responses = yield* together(
          times,
          () => raw("POST", "/api/security/ip-allowlist", { cidr: "127.0.0.0/8" })
        )
        const statuses = responses.map((r) => r.status).sort()
        assert.deepStrictEqual(statuses, [201, ...Array.from({ length: times - 1 }, () => 409)])
        const { rules } = yield* admin.api.security.listIpRules()
        assert.strictEqual(rules.filter((rule) => rule.cidr === "127.0.0.0/8").length, 1)
      }))
  })
})
