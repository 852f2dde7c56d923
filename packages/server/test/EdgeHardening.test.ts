/**
 * What the edge answers before any endpoint runs (issue #8, items 9, 10 and
 * 14): bodies that are not JSON, wrong methods, oversized URLs and headers,
 * what Node's parser refuses, slow clients, too many connections from one
 * address, and session tokens without an expiry; and text that is not valid
 * Unicode, refused where a body is parsed. Every answer is a JSON `{error}` body.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { decodeJwt, SignJWT } from "jose"
import { connect } from "node:net"
import { ServerConfig } from "../src/Platform/Config.ts"
import { adminClient, http, json, layer as testServer, serverSuite, sessionCookie, TestServer } from "./TestServer.ts"

interface RawAnswer {
  readonly status: number
  readonly headers: string
  readonly body: any
  readonly closed: boolean
}

/** Writes `data` on a raw socket and reads the answer until the server closes it (or `wait` passes). */
const raw = (data: string | undefined, wait = 5_000) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const url = new URL(server.baseUrl)
    return yield* Effect.callback<RawAnswer>((resume) => {
      const socket = connect(Number(url.port), url.hostname)
      let received = ""
      const finish = (closed: boolean) => {
        clearTimeout(timer)
        socket.destroy()
        const [head = "", text = ""] = received.split("\r\n\r\n")
        let body: any = text
        try {
          body = JSON.parse(text)
        } catch {
          // keep the text
        }
        resume(Effect.succeed({ status: Number(head.split(" ")[1] ?? 0), headers: head, body, closed }))
      }
      const timer = setTimeout(() => finish(false), wait)
      socket.on("data", (chunk) => (received += chunk.toString("latin1")))
      socket.on("close", () => finish(true))
      socket.on("error", () => finish(true))
      if (data !== undefined) socket.write(data)
    })
  })

const cookie = Effect.flatMap(adminClient, sessionCookie)

layer(testServer(), serverSuite)("the HTTP edge refuses bad input with JSON errors", (it) => {
  describe("lone UTF-16 surrogates", () => {
    it.effect("are a 400 in any text field, and nothing is written; a well-formed pair is fine", () =>
      Effect.gen(function*() {
        const headers = { cookie: yield* cookie }
        const email = `surrogate-${crypto.randomUUID().slice(0, 8)}@example.com`
        const body = (nombre: string) =>
          `{"email":"${email}","nombre":"${nombre}","password":"Correct-Horse-9","role_id":"r_user"}`
        for (const lone of ["\\ud800", "x\\udfff", "\\udbff\\u0041"]) {
          const refused = yield* http("/api/admin/users", json("POST", body(lone), headers))
          assert.strictEqual(refused.status, 400, lone)
          assert.match(refused.body.error, /valid Unicode/)
        }
        const space = yield* http(
          "/api/admin/spaces",
          json("POST", `{"code":"s-${crypto.randomUUID().slice(0, 6)}","name":"\\ud800"}`, headers)
        )
        assert.strictEqual(space.status, 400)
        const key = yield* http("/v1/keys", json("POST", `{"name":"k","scopes":["chat"],"\\udc00":1}`, headers))
        assert.strictEqual(key.status, 400)
        const admin = yield* adminClient
        const { users } = yield* admin.api.admin.listUsers()
        assert.isFalse(users.some((user) => user.email === email))
        const pair = yield* http("/api/admin/users", json("POST", body("Smile \\ud83d\\ude00"), headers))
        assert.strictEqual(pair.status, 201)
        assert.strictEqual(pair.body.nombre, "Smile \u{1F600}")
        const escaped = yield* http(
          "/api/admin/spaces",
          json("POST", `{"code":"s-${crypto.randomUUID().slice(0, 6)}","name":"back\\\\ud800slash"}`, headers)
        )
        assert.strictEqual(escaped.status, 201)
      }))
  })

  describe("bytes that are not UTF-8", () => {
    it.effect("are a 400 naming UTF-8, and nothing is written; U+FFFD sent as UTF-8 is a character like any other", () =>
      Effect.gen(function*() {
        const headers = { cookie: yield* cookie }
        const code = `s-${crypto.randomUUID().slice(0, 6)}`
        const space = (name: Uint8Array) =>
          http("/api/admin/spaces", {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: Buffer.concat([Buffer.from(`{"code":"${code}","name":"`), name, Buffer.from("\"}")])
          })
        // A Latin-1 "é", a lone continuation byte, an over-long "/", a truncated sequence.
        for (const bytes of [[0xe9], [0x80], [0xc0, 0xaf], [0xe2, 0x82]]) {
          const refused = yield* space(Uint8Array.from(bytes))
          assert.strictEqual(refused.status, 400, String(bytes))
          assert.match(refused.body.error, /UTF-8/)
        }
        const admin = yield* adminClient
        const { spaces } = yield* admin.api.admin.listSpaces()
        assert.isFalse(spaces.some((s) => s.code === code))
        const replacement = yield* space(Buffer.from("caf\uFFFD", "utf8"))
        assert.strictEqual(replacement.status, 201)
        assert.strictEqual(replacement.body.name, "caf\uFFFD")
      }))
  })

  describe("media types", () => {
    it.effect("a text/plain, form, multipart or other +json body on a JSON endpoint is a 415 {error}", () =>
      Effect.gen(function*() {
        const bodies: ReadonlyArray<readonly [string, string]> = [
          ["text/plain", "{\"email\":\"a@b.co\",\"password\":\"x\"}"],
          // JSON in a media type this endpoint does not declare (SCIM's is SCIM's own): not effect's plain-text 415.
          ["application/merge-patch+json", "{\"email\":\"a@b.co\",\"password\":\"x\"}"],
          ["application/scim+json", "{\"email\":\"a@b.co\",\"password\":\"x\"}"],
          ["application/x-www-form-urlencoded", "email=a%40b.co&password=x"],
          [
            "multipart/form-data; boundary=XyZ",
            "--XyZ\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\na@b.co\r\n--XyZ--\r\n"
          ]
        ]
        for (const [contentType, body] of bodies) {
          const refused = yield* http("/api/auth/login", {
            method: "POST",
            headers: { "content-type": contentType },
            body
          })
          assert.strictEqual(refused.status, 415, contentType)
          assert.strictEqual(refused.headers.get("content-type"), "application/json")
          assert.strictEqual(refused.body._tag, "UnsupportedMediaType")
          assert.match(refused.body.error, /application\/json/)
        }
        for (const encoding of ["gzip", "br"]) {
          const encoded = yield* http("/api/auth/login", {
            method: "POST",
            headers: { "content-type": "application/json", "content-encoding": encoding },
            body: JSON.stringify({ email: "nobody@example.com", password: "x" })
          })
          assert.strictEqual(encoded.status, 415, encoding)
          assert.match(encoded.body.error, new RegExp(`Content-Encoding ${encoding}: send the body uncompressed`))
        }
        const charset = yield* http("/api/auth/login", {
          method: "POST",
          headers: { "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({ email: "nobody@example.com", password: "x" })
        })
        assert.strictEqual(charset.status, 401)
      }))
  })

  describe("methods", () => {
    it.effect("a wrong method on a known path is a 405 {error} with Allow; an unknown path stays 404", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["DELETE", "/api/auth/login", "POST"],
          ["GET", "/v1/knowledge/ingest", "POST, DELETE"],
          ["PUT", "/v1/agents", "GET"],
          ["PATCH", "/v1/keys/abc", "DELETE"],
          ["PUT", "/mcp", "POST"]
        ]
        for (const [method, path, allow] of cases) {
          const answer = yield* http(path, { method })
          assert.strictEqual(answer.status, 405, `${method} ${path}`)
          assert.strictEqual(answer.headers.get("allow"), allow, `${method} ${path}`)
          assert.strictEqual(answer.body._tag, "MethodNotAllowed")
        }
        const unknown = yield* http("/v1/nothing-here", { method: "PUT" })
        assert.strictEqual(unknown.status, 404)
      }))

    it.effect("a path parameter the router refuses is a 400 (bad percent-encoding) or a 404 (over 100 characters), not a 405 for the method it used", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [string, string]> = [
          ["GET", "/v1/agents/%ZZ"],
          ["DELETE", "/v1/keys/%E0%A4%A"],
          ["POST", "/v1/actions/%ED%A0%80/execute"],
          ["GET", "/api/rooms/%"]
        ]
        for (const [method, path] of cases) {
          const answer = yield* http(path, { method })
          assert.strictEqual(answer.status, 400, `${method} ${path}`)
          assert.strictEqual(answer.headers.get("allow"), null, `${method} ${path}`)
          assert.strictEqual(answer.body._tag, "InvalidRequest")
          assert.match(answer.body.error, /malformed percent-encoding.*%25/)
        }
        // An id longer than the router takes names nothing: the 404 the operation declares.
        const long = yield* http(`/v1/agents/${"a".repeat(101)}`)
        assert.strictEqual(long.status, 404)
        assert.strictEqual(long.body._tag, "NotFound")
        assert.match(long.body.error, /longer than 100 characters/)
        const longOnDelete = yield* http(`/api/webhook-subs/${"b".repeat(150)}`, { method: "DELETE" })
        assert.strictEqual(longOnDelete.status, 404)
      }))
  })

  describe("sizes", () => {
    it.effect("a URL over 8 KiB is a 414 {error}; headers over 16 KiB a 431 {error}", () =>
      Effect.gen(function*() {
        const long = yield* http(`/v1/agents?space=${"x".repeat(9_000)}`)
        assert.strictEqual(long.status, 414)
        assert.strictEqual(long.body._tag, "UriTooLong")
        const huge = yield* raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"y".repeat(20_000)}\r\n\r\n`)
        assert.strictEqual(huge.status, 431)
        assert.match(huge.headers, /Content-Type: application\/json/)
        assert.strictEqual(huge.body._tag, "HeadersTooLarge")
        // Under SCIM's paths (both roots) in SCIM's error schema, as every other SCIM error.
        for (const base of ["/v1/scim", "/api/v1/scim"]) {
          const filter = encodeURIComponent(`userName eq "${"z".repeat(20_000)}"`)
          const scim = yield* raw(`GET ${base}/Users?filter=${filter} HTTP/1.1\r\nHost: x\r\n\r\n`)
          assert.strictEqual(scim.status, 431, base)
          assert.match(scim.headers, /Content-Type: application\/scim\+json/)
          assert.deepStrictEqual(scim.body.schemas, ["urn:ietf:params:scim:api:messages:2.0:Error"])
          assert.strictEqual(scim.body.status, "431")
        }
        // And the contract says so.
        const contract = yield* http("/openapi.json")
        const documented = contract.body.paths["/v1/scim/Users"].get.responses["431"].$ref.split("/").pop()
        assert.containsAllKeys(contract.body.components.responses[documented].content, ["application/scim+json"])
      }))

    it.effect("what Node's parser refuses is a 400 {error}", () =>
      Effect.gen(function*() {
        for (
          const garbage of [
            "NOT HTTP AT ALL\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "GET /\u0001 HTTP/1.1\r\n\r\n"
          ]
        ) {
          const answer = yield* raw(garbage)
          assert.strictEqual(answer.status, 400, JSON.stringify(garbage))
          assert.strictEqual(answer.body._tag, "InvalidRequest")
        }
      }))
  })

  describe("session tokens", () => {
    it.effect("a correctly signed session JWT without exp is refused", () =>
      Effect.gen(function*() {
        const headers = { cookie: yield* cookie }
        const token = headers.cookie.slice("Service-Token=".length)
        const claims = decodeJwt(token)
        const config = yield* ServerConfig
        const secret = new TextEncoder().encode(Redacted.value(Option.getOrThrow(config.sessionSecret)))
        const forever = yield* Effect.promise(() =>
          new SignJWT({ sid: claims.sid, tid: claims.tid })
            .setProtectedHeader({ alg: "HS256", typ: "JWT" })
            .setSubject(claims.sub!)
            .setIssuedAt()
            .setIssuer("agent-platform")
            .sign(secret)
        )
        assert.strictEqual((yield* http("/api/auth/me", { headers })).status, 200)
        const refused = yield* http("/api/auth/me", { headers: { cookie: `Service-Token=${forever}` } })
        assert.strictEqual(refused.status, 401)
      }))
  })
})

layer(
  testServer({ HTTP_HEADERS_TIMEOUT_MS: "500", HTTP_REQUEST_TIMEOUT_MS: "1500", MAX_CONNECTIONS_PER_IP: "4" }),
  serverSuite
)(
  "slow and greedy clients",
  (it) => {
    it.effect("a client that trickles its headers gets a 408 {error} and the connection closed", () =>
      Effect.gen(function*() {
        const answer = yield* raw("GET /health HTTP/1.1\r\nHost: x\r\n", 10_000)
        assert.isTrue(answer.closed)
        assert.strictEqual(answer.status, 408)
        assert.strictEqual(answer.body._tag, "RequestTimeout")
      }))

    it.effect("a client that trickles its body gets a 408 too", () =>
      Effect.gen(function*() {
        const answer = yield* raw(
          "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
          10_000
        )
        assert.isTrue(answer.closed)
        assert.strictEqual(answer.status, 408)
      }))

    it.effect("a request its credentials refuse is answered without waiting for its body", () =>
      Effect.gen(function*() {
        // The body is read where the endpoint decodes it, after authentication: a caller without a
        // key cannot make the service wait for (or buffer) a body. Answered well before the 1.5 s timeout.
        const answer = yield* raw(
          "POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
          1_000
        )
        assert.strictEqual(answer.status, 401)
        assert.strictEqual(answer.body._tag, "Unauthenticated")
      }))

    it.effect("one address holds at most MAX_CONNECTIONS_PER_IP connections; the next is refused with 429 {error}", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const url = new URL(server.baseUrl)
        const held = yield* Effect.acquireRelease(
          Effect.forEach([1, 2, 3, 4], () =>
            Effect.callback<ReturnType<typeof connect>>((resume) => {
              const socket = connect(Number(url.port), url.hostname, () => resume(Effect.succeed(socket)))
            })),
          (sockets) => Effect.sync(() => sockets.forEach((socket) => socket.destroy()))
        )
        // Let the server count them before the next one arrives.
        yield* Effect.sleep("100 millis")
        const refused = yield* raw(undefined, 5_000)
        assert.strictEqual(refused.status, 429)
        assert.strictEqual(refused.body._tag, "TooManyConnections")
        held[0].destroy()
        const deadline = Date.now() + 5_000
        let status = 0
        while (status !== 200 && Date.now() < deadline) {
          status = (yield* raw("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000)).status
        }
        assert.strictEqual(status, 200)
      }).pipe(Effect.scoped))
  }
)
