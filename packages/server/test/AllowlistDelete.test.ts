/**
 * Removing an IP allowlist rule (issue #8, item 11): the same guard as adding
 * one, so that an administrator cannot lock the whole tenant out by mistake.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  adminClient,
  adminEmail,
  adminPassword,
  http,
  json,
  layer as testServer,
  messageOf,
  serverSuite
} from "./TestServer.ts"

layer(testServer(), serverSuite)("DELETE /api/security/ip-allowlist/{id}", (it) => {
  it.effect("removing the rule that covers the caller is a 409 unless forced; the tenant stays reachable", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const mine = yield* admin.api.security.createIpRule({ payload: { cidr: "127.0.0.0/8" } })
      const office = yield* admin.api.security.createIpRule({ payload: { cidr: "203.0.113.0/24" } })
      const refused = yield* admin.api.security.deleteIpRule({ params: { id: mine.id }, query: {} }).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "Conflict")
      assert.match(messageOf(refused), /would lock out your current IP 127\.0\.0\.1/)
      const { rules } = yield* admin.api.security.listIpRules()
      assert.sameMembers(rules.map((rule) => rule.cidr), ["127.0.0.0/8", "203.0.113.0/24"])
      assert.strictEqual(
        (yield* http("/api/auth/login", json("POST", { email: adminEmail, password: adminPassword }))).status,
        200
      )

      // A rule that does not cover the caller goes without ceremony; then the last rule may go too (no rules: every address).
      yield* admin.api.security.deleteIpRule({ params: { id: office.id }, query: {} })
      yield* admin.api.security.deleteIpRule({ params: { id: mine.id }, query: {} })
      assert.deepStrictEqual((yield* admin.api.security.listIpRules()).rules, [])
    }))

  it.effect("with force=true the rule goes, and sign-ins from the caller's address are refused from then on", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      const mine = yield* admin.api.security.createIpRule({ payload: { cidr: "127.0.0.1" } })
      yield* admin.api.security.createIpRule({ payload: { cidr: "198.51.100.0/24" } })
      const forced = yield* admin.api.security.deleteIpRule({ params: { id: mine.id }, query: { force: "true" } })
      assert.isTrue(forced.success)
      const login = yield* http("/api/auth/login", json("POST", { email: adminEmail, password: adminPassword }))
      assert.strictEqual(login.status, 403)
      assert.strictEqual(login.body._tag, "IpNotAllowed")
    }))
})
