import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  adminEmail,
  adminPassword,
  http,
  json,
  layer as testServer,
  messageOf,
  serverSuite,
  signIn,
  TestServer
} from "./TestServer.ts"
import { totp } from "./Totp.ts"

/** Creates a user as the bootstrap admin. */
const createUser = (
  email: string,
  password = "Correct-Horse-9",
  role: "r_user" | "r_admin" | "r_security_officer" = "r_user"
) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const admin = yield* server.admin
    return yield* admin.api.admin.createUser({
      payload: { email, nombre: email.split("@")[0], password, role_id: role }
    })
  }).pipe(Effect.orDie)

const login = (email: string, password: string, extra: Record<string, unknown> = {}) =>
  http("/api/auth/login", json("POST", { email, password, ...extra }))

const cookieOf = (headers: Headers) => {
  const setCookie = headers.get("set-cookie") ?? ""
  return /Service-Token=([^;]+)/.exec(setCookie)?.[1]
}

layer(testServer(), serverSuite)("POST /api/auth/login", (it) => {
  it.effect("signs in with the right password: 200 Session and an HttpOnly, SameSite=Lax session cookie", () =>
    Effect.gen(function*() {
      const { status, headers, body } = yield* login(adminEmail, adminPassword)
      assert.strictEqual(status, 200)
      assert.strictEqual(body.email, adminEmail)
      assert.strictEqual(body.role_id, "r_superadmin")
      assert.isString(body.tenant_id)
      assert.isString(body.user_id)
      assert.strictEqual(body.nombre, "Administrator")
      const setCookie = headers.get("set-cookie") ?? ""
      assert.match(setCookie, /^Service-Token=/)
      assert.match(setCookie, /HttpOnly/i)
      assert.match(setCookie, /SameSite=Lax/i)
      assert.match(setCookie, /Path=\//)
    }))

  it.effect("answers a wrong password and an unknown email alike: 401 {error}", () =>
    Effect.gen(function*() {
      const wrong = yield* login(adminEmail, "not-the-password")
      const unknown = yield* login("nobody@example.com", "not-the-password")
      assert.strictEqual(wrong.status, 401)
      assert.strictEqual(unknown.status, 401)
      assert.strictEqual(wrong.body.error, "Invalid email or password.")
      assert.deepStrictEqual(unknown.body, wrong.body)
    }))

  it.effect("GET /api/auth/me answers 200 with the session, 401 without one", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const me = yield* admin.api.auth.me()
      assert.strictEqual(me.email, adminEmail)
      const anonymous = yield* server.client()
      const error = yield* anonymous.api.auth.me().pipe(Effect.flip)
      assert.strictEqual(error._tag, "Unauthenticated")
    }))

  it.effect("accepts the session under the cookie name service_session too", () =>
    Effect.gen(function*() {
      const { headers } = yield* login(adminEmail, adminPassword)
      const token = cookieOf(headers)
      const me = yield* http("/api/auth/me", { headers: { cookie: `service_session=${token}` } })
      assert.strictEqual(me.status, 200)
      assert.strictEqual(me.body.email, adminEmail)
    }))

  it.effect("logout ends the session server-side: the same token is refused afterwards", () =>
    Effect.gen(function*() {
      const { headers } = yield* login(adminEmail, adminPassword)
      const cookie = `Service-Token=${cookieOf(headers)}`
      const out = yield* http("/api/auth/logout", { method: "POST", headers: { cookie } })
      assert.strictEqual(out.status, 200)
      assert.match(out.headers.get("set-cookie") ?? "", /Service-Token=;.*Max-Age=0/i)
      const me = yield* http("/api/auth/me", { headers: { cookie } })
      assert.strictEqual(me.status, 401)
    }))

  it.effect("412 when the password must be changed, then change-password opens the way", () =>
    Effect.gen(function*() {
      const user = yield* createUser("must-change@example.com")
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.admin.updateUser({ params: { id: user.id }, payload: { must_change_password: true } })
      const refused = yield* login("must-change@example.com", "Correct-Horse-9")
      assert.strictEqual(refused.status, 412)
      assert.match(refused.body.error, /change-password/)
      const weak = yield* http(
        "/api/auth/change-password",
        json("POST", {
          email: "must-change@example.com",
          current_password: "Correct-Horse-9",
          new_password: "short"
        })
      )
      assert.strictEqual(weak.status, 400)
      assert.strictEqual(weak.body.error, "Password must have at least 12 characters, an uppercase letter, a digit.")
      const changed = yield* http(
        "/api/auth/change-password",
        json("POST", {
          email: "must-change@example.com",
          current_password: "Correct-Horse-9",
          new_password: "Battery-Staple-42"
        })
      )
      assert.strictEqual(changed.status, 200)
      assert.strictEqual((yield* login("must-change@example.com", "Battery-Staple-42")).status, 200)
      assert.strictEqual((yield* login("must-change@example.com", "Correct-Horse-9")).status, 401)
    }))

  it.effect("412 when the password is older than the policy's max_age_days", () =>
    Effect.gen(function*() {
      yield* createUser("expired@example.com")
      const sql = yield* SqlClient.SqlClient
      const server = yield* TestServer
      const admin = yield* server.admin
      const policy = yield* admin.api.security.getPasswordPolicy()
      yield* admin.api.security.updatePasswordPolicy({ payload: { ...policy, max_age_days: 30 } })
      yield* sql`UPDATE users SET password_changed_at = now() - interval '31 days' WHERE email = 'expired@example.com'`
      const refused = yield* login("expired@example.com", "Correct-Horse-9")
      assert.strictEqual(refused.status, 412)
      assert.match(refused.body.error, /expired/)
      yield* admin.api.security.updatePasswordPolicy({ payload: { ...policy, max_age_days: null } })
    }))

  it.effect("locks the account after more than lockout_threshold failures: 401 even with the right password, until unblocked", () =>
    Effect.gen(function*() {
      const user = yield* createUser("lockme@example.com")
      const server = yield* TestServer
      const admin = yield* server.admin
      const policy = yield* admin.api.security.getPasswordPolicy()
      yield* admin.api.security.updatePasswordPolicy({
        payload: { ...policy, lockout_threshold: 3, lockout_minutes: 10 }
      })
      for (let attempt = 1; attempt <= 4; attempt++) {
        assert.strictEqual((yield* login("lockme@example.com", "wrong-password")).status, 401)
      }
      const locked = yield* login("lockme@example.com", "Correct-Horse-9")
      assert.strictEqual(locked.status, 401)
      assert.strictEqual(locked.body.error, "Invalid email or password.")
      yield* admin.api.admin.updateUser({ params: { id: user.id }, payload: { blocked: false } })
      assert.strictEqual((yield* login("lockme@example.com", "Correct-Horse-9")).status, 200)
      yield* admin.api.security.updatePasswordPolicy({ payload: policy })
    }))

  it.effect("403 for a blocked account, and blocking ends its sessions", () =>
    Effect.gen(function*() {
      const user = yield* createUser("blocked@example.com")
      const session = yield* signIn("blocked@example.com", "Correct-Horse-9")
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.admin.updateUser({ params: { id: user.id }, payload: { blocked: true } })
      const refused = yield* login("blocked@example.com", "Correct-Horse-9")
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body._tag, "AccountBlocked")
      const error = yield* session.api.auth.me().pipe(Effect.flip)
      assert.strictEqual(error._tag, "Unauthenticated")
    }))

  it.effect("a role change ends the user's sessions", () =>
    Effect.gen(function*() {
      const user = yield* createUser("promoted@example.com")
      const session = yield* signIn("promoted@example.com", "Correct-Horse-9")
      assert.strictEqual((yield* session.api.auth.me()).role_id, "r_user")
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.admin.updateUser({ params: { id: user.id }, payload: { role_id: "r_admin" } })
      assert.strictEqual((yield* session.api.auth.me().pipe(Effect.flip))._tag, "Unauthenticated")
      const again = yield* signIn("promoted@example.com", "Correct-Horse-9")
      assert.strictEqual((yield* again.api.auth.me()).role_id, "r_admin")
    }))
})

layer(testServer(), serverSuite)("TOTP MFA", (it) => {
  it.effect("setup, verify with a code computed independently, then login needs the code and refuses a replay", () =>
    Effect.gen(function*() {
      yield* createUser("mfa@example.com")
      const session = yield* signIn("mfa@example.com", "Correct-Horse-9")
      const setup = yield* session.api.auth.mfaSetup()
      assert.match(setup.secret, /^[A-Z2-7]+=*$/)
      assert.match(setup.otpauth_url, /^otpauth:\/\/totp\/.*secret=/)
      assert.match(setup.qr_code, /^data:image\/png;base64,/)

      const bad = yield* session.api.auth.mfaVerify({ payload: { code: "000000" } }).pipe(Effect.flip)
      assert.strictEqual(bad._tag, "InvalidRequest")
      const enabled = yield* session.api.auth.mfaVerify({ payload: { code: totp(setup.secret) } })
      assert.deepStrictEqual(enabled, { mfa_enabled: true })

      const missing = yield* login("mfa@example.com", "Correct-Horse-9")
      assert.strictEqual(missing.status, 401)
      assert.match(missing.body.error, /totp_code/)
      const wrong = yield* login("mfa@example.com", "Correct-Horse-9", {
        totp_code: "123456" === totp(setup.secret, 1) ? "654321" : "123456"
      })
      assert.strictEqual(wrong.status, 401)
      // The code used to confirm setup is spent; the next step's code (within the ±1 step window) works once.
      const next = totp(setup.secret, 1)
      const ok = yield* login("mfa@example.com", "Correct-Horse-9", { totp_code: next })
      assert.strictEqual(ok.status, 200)
      const replay = yield* login("mfa@example.com", "Correct-Horse-9", { totp_code: next })
      assert.strictEqual(replay.status, 401)
    }))

  it.effect("change-password needs the TOTP code once MFA is on: the password alone cannot replace itself", () =>
    Effect.gen(function*() {
      yield* createUser("mfa-change@example.com")
      const session = yield* signIn("mfa-change@example.com", "Correct-Horse-9")
      const setup = yield* session.api.auth.mfaSetup()
      yield* session.api.auth.mfaVerify({ payload: { code: totp(setup.secret) } })
      const change = (extra: Record<string, unknown>) =>
        http(
          "/api/auth/change-password",
          json("POST", {
            email: "mfa-change@example.com",
            current_password: "Correct-Horse-9",
            new_password: "Battery-Staple-42",
            ...extra
          })
        )

      const missing = yield* change({})
      assert.strictEqual(missing.status, 401)
      assert.match(missing.body.error, /totp_code/)
      const wrong = yield* change({ totp_code: "123456" === totp(setup.secret, 1) ? "654321" : "123456" })
      assert.strictEqual(wrong.status, 401)
      assert.strictEqual(wrong.body.error, "Invalid or already used TOTP code.")
      // Nothing changed: the old password and the owner's session still work.
      assert.strictEqual((yield* session.api.auth.me()).email, "mfa-change@example.com")

      const changed = yield* change({ totp_code: totp(setup.secret, 1) })
      assert.strictEqual(changed.status, 200)
      // The new password now opens the way to the second factor; the old one does not.
      const withNew = yield* login("mfa-change@example.com", "Battery-Staple-42")
      assert.strictEqual(withNew.status, 401)
      assert.match(withNew.body.error, /totp_code/)
      assert.strictEqual(
        (yield* login("mfa-change@example.com", "Correct-Horse-9")).body.error,
        "Invalid email or password."
      )
    }))
})

layer(testServer(), serverSuite)("IP allowlist", (it) => {
  it.effect("refuses a rule set that would lock out the caller unless forced, then answers 403 to sign-ins from outside", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const invalid = yield* admin.api.security.createIpRule({ payload: { cidr: "not-a-cidr" } }).pipe(Effect.flip)
      assert.strictEqual(invalid._tag, "InvalidRequest")
      const lockout = yield* admin.api.security.createIpRule({ payload: { cidr: "203.0.113.0/24" } }).pipe(Effect.flip)
      assert.strictEqual(lockout._tag, "Conflict")
      assert.match(messageOf(lockout), /lock out your current IP 127\.0\.0\.1/)

      const v6 = yield* admin.api.security.createIpRule({
        payload: { cidr: "2001:db8::/32", description: "office v6", force: true }
      })
      assert.strictEqual(v6.cidr, "2001:db8::/32")
      const refused = yield* login(adminEmail, adminPassword)
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body._tag, "IpNotAllowed")
      // The existing session is refused too, from outside the allowlist.
      assert.strictEqual((yield* admin.api.auth.me().pipe(Effect.flip))._tag, "IpNotAllowed")

      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO ip_allowlist (tenant_id, cidr) SELECT tenant_id, '127.0.0.0/8' FROM users WHERE email = ${adminEmail}`
      assert.strictEqual((yield* login(adminEmail, adminPassword)).status, 200)
      const rules = yield* admin.api.security.listIpRules()
      assert.sameMembers(rules.rules.map((rule) => rule.cidr), ["2001:db8::/32", "127.0.0.0/8"])
      yield* admin.api.security.deleteIpRule({ params: { id: v6.id }, query: {} })
      assert.strictEqual(
        (yield* admin.api.security.deleteIpRule({ params: { id: v6.id }, query: {} }).pipe(Effect.flip))._tag,
        "NotFound"
      )
    }))
})

/** A login from behind proxies: `x-forwarded-for` as the proxies in front left it. */
const loginVia = (forwardedFor: string) =>
  http(
    "/api/auth/login",
    json("POST", { email: adminEmail, password: adminPassword }, { "x-forwarded-for": forwardedFor })
  )

layer(testServer({ TRUST_PROXY: "true" }), serverSuite)("IP allowlist behind a trusted proxy", (it) => {
  it.effect("with TRUST_PROXY=true the client IP is the address the proxy appended: the right-most one", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.security.createIpRule({ payload: { cidr: "198.51.100.0/24", force: true } })
      assert.strictEqual((yield* loginVia("198.51.100.7")).status, 200)
      // The client sent `X-Forwarded-For: 198.51.100.7` itself; the proxy appended the address it really came from.
      const forged = yield* loginVia("198.51.100.7, 203.0.113.9")
      assert.strictEqual(forged.status, 403)
      assert.match(forged.body.error, /203\.0\.113\.9/)
    }))
})

layer(testServer({ TRUST_PROXY: "2" }), serverSuite)("IP allowlist behind two trusted proxies", (it) => {
  it.effect("with TRUST_PROXY=2 the client IP is the second address from the right", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.security.createIpRule({ payload: { cidr: "198.51.100.0/24", force: true } })
      assert.strictEqual((yield* loginVia("203.0.113.1, 198.51.100.7, 10.0.0.1")).status, 200)
      const forged = yield* loginVia("198.51.100.7, 203.0.113.9, 10.0.0.1")
      assert.strictEqual(forged.status, 403)
      assert.match(forged.body.error, /203\.0\.113\.9/)
    }))
})

layer(testServer(), serverSuite)("IP allowlist without a trusted proxy", (it) => {
  it.effect("ignores X-Forwarded-For: a forged header does not get a client in", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      yield* admin.api.security.createIpRule({ payload: { cidr: "198.51.100.0/24", force: true } })
      const forged = yield* http(
        "/api/auth/login",
        json("POST", { email: adminEmail, password: adminPassword }, { "x-forwarded-for": "198.51.100.7" })
      )
      assert.strictEqual(forged.status, 403)
      assert.match(forged.body.error, /127\.0\.0\.1/)
    }))
})
