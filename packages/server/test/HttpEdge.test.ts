import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { http, json, layer as testServer, serverSuite } from "./TestServer.ts"

/** Every path of the spec, as the OpenAPI description must list it. */
const specPaths = [
  "/v1/chat/completions",
  "/v1/chat/history/{chatId}",
  "/v1/agents",
  "/v1/agents/{id}",
  "/v1/knowledge",
  "/v1/knowledge/ingest",
  "/v1/actions",
  "/v1/actions/{id}/execute",
  "/v1/usage",
  "/v1/keys",
  "/v1/keys/{id}",
  "/v1/scim/Users",
  "/v1/scim/Users/{id}",
  "/v1/scim/Groups",
  "/v1/scim/Groups/{id}",
  "/api/auth/login",
  "/api/auth/logout",
  "/api/auth/me",
  "/api/auth/mfa/setup",
  "/api/auth/mfa/verify",
  "/api/rooms",
  "/api/rooms/{id}",
  "/api/rooms/{id}/participants",
  "/api/rooms/{id}/close",
  "/api/rooms/{id}/invite",
  "/api/rooms/{id}/invitable-users",
  "/api/chats/{id}/messages/append",
  "/api/chats/{id}/messages",
  "/api/room-blueprints",
  "/api/room-blueprints/seed-defaults",
  "/api/chats/{id}/corrections",
  "/api/agents/{id}/corrections",
  "/api/webhook-subs",
  "/api/webhook-subs/{id}/log",
  "/api/webhook-subs/{id}/retry",
  "/api/export/conversations",
  "/api/export/metrics",
  "/api/export/roi-report",
  "/api/security/ip-allowlist",
  "/api/security/password-policy",
  "/api/audit/verify",
  "/api/audit/adoption",
  "/api/space-admin/assignments",
  "/api/compliance/provenance",
  "/api/compliance/integrity",
  "/api/compliance/hitl-map",
  "/api/compliance/export",
  "/health"
]

layer(testServer(), serverSuite)("the HTTP edge", (it) => {
  it.effect("publishes the whole contract at /openapi.json, version 5.25.0", () =>
    Effect.gen(function*() {
      const { status, body } = yield* http("/openapi.json")
      assert.strictEqual(status, 200)
      assert.strictEqual(body.openapi, "3.1.0")
      assert.strictEqual(body.info.version, "5.25.0")
      const missing = specPaths.filter((path) => body.paths[path] === undefined)
      assert.deepStrictEqual(missing, [])
      assert.isDefined(body.paths["/v1/actions/{id}/execute"].post.responses["502"])
      assert.isDefined(body.components.securitySchemes)
    }))

  it.effect("serves an interactive reference at /docs", () =>
    Effect.gen(function*() {
      const { status, headers, body } = yield* http("/docs")
      assert.strictEqual(status, 200)
      assert.match(headers.get("content-type") ?? "", /text\/html/)
      assert.include(body, "openapi")
    }))

  it.effect("answers an unknown route with 404 {error}", () =>
    Effect.gen(function*() {
      const { status, body } = yield* http("/v1/nothing-here")
      assert.strictEqual(status, 404)
      assert.strictEqual(body.error, "No route for GET /v1/nothing-here. The API reference is at /docs.")
    }))

  it.effect("answers malformed JSON with 400 {error}", () =>
    Effect.gen(function*() {
      const { status, body } = yield* http("/api/auth/login", json("POST", "{\"email\": "))
      assert.strictEqual(status, 400)
      assert.strictEqual(body._tag, "InvalidRequest")
      assert.match(body.error, /valid JSON/)
    }))

  it.effect("answers an invalid payload with 400 naming the field", () =>
    Effect.gen(function*() {
      const { status, body } = yield* http(
        "/api/auth/login",
        json("POST", JSON.stringify({ email: "not-an-email", password: "x" }))
      )
      assert.strictEqual(status, 400)
      assert.match(body.error, /^Invalid request body: email: must be an email address/)
      const missing = yield* http("/api/auth/login", json("POST", JSON.stringify({ email: "a@example.com" })))
      assert.strictEqual(missing.status, 400)
      assert.match(missing.body.error, /password/)
    }))

  it.effect("answers a body over the limit with 413 {error}", () =>
    Effect.gen(function*() {
      const big = JSON.stringify({ email: "a@example.com", password: "x".repeat(2 * 1024 * 1024) })
      const { status, body } = yield* http("/api/auth/login", json("POST", big))
      assert.strictEqual(status, 413)
      assert.strictEqual(body._tag, "PayloadTooLarge")
    }))

  it.effect("generates an X-Request-Id, or echoes the caller's", () =>
    Effect.gen(function*() {
      const generated = yield* http("/health")
      assert.match(generated.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
      const echoed = yield* http("/health", { headers: { "x-request-id": "trace-abc.123" } })
      assert.strictEqual(echoed.headers.get("x-request-id"), "trace-abc.123")
      const unsafe = yield* http("/health", { headers: { "x-request-id": "bad id with spaces" } })
      assert.notStrictEqual(unsafe.headers.get("x-request-id"), "bad id with spaces")
    }))

  it.effect("serves the API-key interface at /api/v1 as well as /v1", () =>
    Effect.gen(function*() {
      const direct = yield* http("/v1/agents")
      const aliased = yield* http("/api/v1/agents")
      assert.strictEqual(direct.status, 401)
      assert.strictEqual(aliased.status, 401)
      assert.strictEqual(aliased.body._tag, direct.body._tag)
    }))
})

layer(testServer({ CORS_ORIGINS: "https://app.example.com" }), serverSuite)("CORS", (it) => {
  it.effect("answers a preflight from an allowed origin, and not from others", () =>
    Effect.gen(function*() {
      const allowed = yield* http("/v1/agents", {
        method: "OPTIONS",
        headers: { origin: "https://app.example.com", "access-control-request-method": "GET" }
      })
      assert.strictEqual(allowed.headers.get("access-control-allow-origin"), "https://app.example.com")
      const other = yield* http("/v1/agents", {
        method: "OPTIONS",
        headers: { origin: "https://evil.example.com", "access-control-request-method": "GET" }
      })
      assert.notStrictEqual(other.headers.get("access-control-allow-origin"), "https://evil.example.com")
    }))
})
