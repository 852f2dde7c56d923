/**
 * Web Push of room invitations (spec: rooms rule 1; RFC 8030, 8291, 8292)
 * against a push service written here: it checks the VAPID JWT (ES256, the
 * audience, the expiry, the subject, the key) and decrypts the aes128gcm
 * payload with the subscription's private key, with node:crypto only. Also:
 * subscriptions and preferences, the opt-out and the tenant flag, retries,
 * a 410 that deletes the subscription, and where the VAPID key pair comes
 * from.
 */
import type * as Sdk from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import webpush from "web-push"
import { DatabaseMode } from "../src/Platform/Database.ts"
import { Encryption } from "../src/Platform/Encryption.ts"
import { type ClaimedPush, PushDeliveriesRepo } from "../src/Push/PushDeliveriesRepo.ts"
import { PushDelivery } from "../src/Push/PushDelivery.ts"
import { vapidProblem } from "../src/Push/VapidKeys.ts"
import { eventually, newRoom, person, roomSpace, setPushFlag, setRoomsFlag } from "./RoomsFixtures.ts"
import { adminClient, layer as testServer, messageOf, secondTenant, serverSuite } from "./TestServer.ts"

const vapid = webpush.generateVAPIDKeys()
const subject = "mailto:ops@example.com"

interface PushRequest {
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** A browser's push registration: the subscription JSON it hands over, and the keys to read what arrives. */
const browserKeys = () => {
  const ecdh = createECDH("prime256v1")
  ecdh.generateKeys()
  const auth = randomBytes(16)
  return { ecdh, auth, publicKey: ecdh.getPublicKey() }
}

/** A push service on 127.0.0.1: each POST to /push/<name> is recorded and answered with `answer` (0: left unanswered). */
const pushService = (answer: (count: number) => number) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly origin: string; readonly received: Array<PushRequest>; readonly close: () => void }>(
      (resume) => {
        const received: Array<PushRequest> = []
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            received.push({ headers: req.headers, body: Buffer.concat(chunks) })
            const status = answer(received.length)
            if (status !== 0) res.writeHead(status).end()
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          const close = () => {
            server.closeAllConnections()
            server.close()
          }
          resume(Effect.succeed({ origin: `http://127.0.0.1:${port}`, received, close }))
        })
      }
    ),
    (service) => Effect.sync(service.close)
  )

/** RFC 8292: `Authorization: vapid t=<JWT>, k=<public key>`; the JWT's claims, once its ES256 signature checks out. */
const verifyVapid = (headers: IncomingHttpHeaders, audience: string) => {
  const match = /^vapid t=([^,]+),\s*k=(.+)$/.exec(headers.authorization ?? "")
  assert.isNotNull(match, `Authorization: ${headers.authorization}`)
  const [, token, key] = match!
  const [header, payload, signature] = token.split(".")
  assert.deepStrictEqual(JSON.parse(Buffer.from(header, "base64url").toString()), { typ: "JWT", alg: "ES256" })
  const point = Buffer.from(key, "base64url")
  const publicKey = createPublicKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: point.subarray(1, 33).toString("base64url"),
      y: point.subarray(33, 65).toString("base64url")
    },
    format: "jwk"
  })
  const valid = verify(
    "sha256",
    Buffer.from(`${header}.${payload}`),
    { key: publicKey, dsaEncoding: "ieee-p1363" },
    Buffer.from(signature, "base64url")
  )
  assert.isTrue(valid, "the VAPID JWT signature verifies with k")
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as { aud: string; exp: number; sub: string }
  assert.strictEqual(claims.aud, audience)
  const now = Math.floor(Date.now() / 1000)
  assert.isAbove(claims.exp, now)
  assert.isAtMost(claims.exp, now + 24 * 60 * 60)
  return { key, claims }
}

/** RFC 8291 / RFC 8188: decrypts an aes128gcm push with the browser's private key and auth secret. */
const decrypt = (body: Buffer, browser: ReturnType<typeof browserKeys>): string => {
  const salt = body.subarray(0, 16)
  const idLength = body[20]
  const serverKey = body.subarray(21, 21 + idLength)
  const ciphertext = body.subarray(21 + idLength)
  const shared = browser.ecdh.computeSecret(serverKey)
  const info = Buffer.concat([Buffer.from("WebPush: info\0"), browser.publicKey, serverKey])
  const ikm = Buffer.from(hkdfSync("sha256", shared, browser.auth, info, 32))
  const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16))
  const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12))
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce)
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()])
  // The last record ends with the delimiter 0x02 and zero padding.
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  assert.strictEqual(padded[end], 2)
  return padded.subarray(0, end).toString("utf8")
}

/** POST /api/push/subscriptions with the subscription JSON of `browser`. */
const register = (client: Sdk.Connected, endpoint: string, browser: ReturnType<typeof browserKeys>) =>
  client.api.push.subscribe({
    payload: {
      endpoint,
      expirationTime: null,
      keys: { p256dh: browser.publicKey.toString("base64url"), auth: browser.auth.toString("base64url") }
    }
  })

const subscribe = (client: Sdk.Connected, endpoint: string, browser: ReturnType<typeof browserKeys>) =>
  register(client, endpoint, browser).pipe(Effect.orDie)

const subscriptionIds = (client: Sdk.Connected) =>
  Effect.map(client.api.push.listSubscriptions(), (list) => list.subscriptions.map((s) => s.id)).pipe(Effect.orDie)

const deliveries = (notificationRoom: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ status: string; attempts: number; last_status_code: number | null }>`
      SELECT d.status, d.attempts, d.last_status_code FROM push_deliveries d
      JOIN notifications n ON n.id = d.notification_id WHERE n.room_id = ${notificationRoom} ORDER BY d.created_at`
  }).pipe(Effect.orDie)

/** A host with an open room and a guest to invite. */
const invitation = Effect.gen(function*() {
  yield* setRoomsFlag(true)
  const { seeded } = yield* roomSpace()
  const host = yield* person("Host")
  const guest = yield* person("Guest")
  const room = yield* newRoom(host.client, seeded.blueprint_ids.ephemeral)
  const invite = host.client.api.rooms.invite({ params: { id: room.id }, payload: { user_id: guest.id } }).pipe(
    Effect.orDie
  )
  return { host, guest, room, invite }
})

const env = {
  VAPID_PUBLIC_KEY: vapid.publicKey,
  VAPID_PRIVATE_KEY: vapid.privateKey,
  VAPID_SUBJECT: subject,
  PUSH_RETRY_BASE_MS: "200"
}

layer(testServer(env), serverSuite)("Web Push", (it) => {
  describe("keys, subscriptions, preferences", () => {
    it.effect("the VAPID public key; subscriptions register (same endpoint: same id), list and delete; 400 malformed, 404 others'", () =>
      Effect.gen(function*() {
        const member = yield* person("Member")
        assert.deepStrictEqual(yield* member.client.api.push.vapidPublicKey(), { public_key: vapid.publicKey })
        const browser = browserKeys()
        const endpoint = `https://push.example.net/send/${crypto.randomUUID()}`
        const created = yield* subscribe(member.client, endpoint, browser)
        assert.deepInclude(created, { endpoint })
        const again = yield* subscribe(member.client, endpoint, browserKeys())
        assert.strictEqual(again.id, created.id)
        assert.deepStrictEqual((yield* member.client.api.push.listSubscriptions()).subscriptions.map((s) => s.id), [
          created.id
        ])
        const bad = [
          {
            endpoint: "not a url",
            keys: { p256dh: browser.publicKey.toString("base64url"), auth: browser.auth.toString("base64url") }
          },
          {
            endpoint: "ftp://push.example.net/x",
            keys: { p256dh: browser.publicKey.toString("base64url"), auth: browser.auth.toString("base64url") }
          },
          {
            endpoint: "https://user:secret@push.example.net/x",
            keys: { p256dh: browser.publicKey.toString("base64url"), auth: browser.auth.toString("base64url") }
          },
          {
            endpoint: "https:///push.example.net/x",
            keys: { p256dh: browser.publicKey.toString("base64url"), auth: browser.auth.toString("base64url") }
          },
          {
            endpoint,
            keys: { p256dh: randomBytes(32).toString("base64url"), auth: browser.auth.toString("base64url") }
          },
          {
            endpoint,
            keys: { p256dh: browser.publicKey.toString("base64url"), auth: randomBytes(8).toString("base64url") }
          }
        ]
        for (const payload of bad) {
          const refused = yield* member.client.api.push.subscribe({ payload }).pipe(Effect.flip)
          assert.strictEqual(refused._tag, "InvalidRequest", JSON.stringify(payload))
        }
        const other = yield* person("Other")
        const notTheirs = yield* other.client.api.push.unsubscribe({ params: { id: created.id } }).pipe(Effect.flip)
        assert.strictEqual(notTheirs._tag, "NotFound")
        assert.deepStrictEqual(yield* member.client.api.push.unsubscribe({ params: { id: created.id } }), {
          success: true
        })
        assert.deepStrictEqual((yield* member.client.api.push.listSubscriptions()).subscriptions, [])
      }))

    it.effect("push preferences: on by default, PUT /api/me/preferences opts out and back in", () =>
      Effect.gen(function*() {
        const member = yield* person("Member")
        assert.deepStrictEqual(yield* member.client.api.me.preferences(), { push_notifications: true })
        assert.deepStrictEqual(
          yield* member.client.api.me.updatePreferences({ payload: { push_notifications: false } }),
          { push_notifications: false }
        )
        assert.deepStrictEqual(yield* member.client.api.me.preferences(), { push_notifications: false })
        assert.deepStrictEqual(
          yield* member.client.api.me.updatePreferences({ payload: { push_notifications: true } }),
          { push_notifications: true }
        )
      }))
  })

  describe("invitations", () => {
    it.effect("are pushed: the push service sees a valid VAPID JWT and decrypts the invitation with the deep link", () =>
      Effect.gen(function*() {
        const service = yield* pushService(() => 201)
        const w = yield* invitation
        const browser = browserKeys()
        yield* subscribe(w.guest.client, `${service.origin}/push/guest`, browser)
        const result = yield* w.invite
        assert.deepStrictEqual(result.notified, { inApp: true, pushSent: true })
        yield* eventually(Effect.sync(() => service.received.length), (n) => n === 1)
        const [request] = service.received
        const { key, claims } = verifyVapid(request.headers, service.origin)
        assert.strictEqual(key, vapid.publicKey)
        assert.strictEqual(claims.sub, subject)
        assert.strictEqual(request.headers["content-encoding"], "aes128gcm")
        assert.strictEqual(request.headers.ttl, "86400")
        const message = JSON.parse(decrypt(request.body, browser))
        const [notification] = (yield* w.guest.client.api.notifications.list({ query: {} })).notifications
        assert.deepStrictEqual(message, {
          type: "room_invitation",
          title: "Host invited you to a room",
          body: `Room ${w.room.external_ref}`,
          url: result.link,
          room_id: w.room.id,
          notification_id: notification.id
        })
        assert.deepStrictEqual(yield* eventually(deliveries(w.room.id), (rows) => rows[0]?.status === "delivered"), [
          { status: "delivered", attempts: 1, last_status_code: 201 }
        ])
      }))

    it.effect("the user's opt-out and the tenant flag push_notifications suppress the push; the in-app notification stays", () =>
      Effect.gen(function*() {
        const service = yield* pushService(() => 201)
        const optedOut = yield* invitation
        yield* subscribe(optedOut.guest.client, `${service.origin}/push/opted-out`, browserKeys())
        yield* optedOut.guest.client.api.me.updatePreferences({ payload: { push_notifications: false } })
        assert.deepStrictEqual((yield* optedOut.invite).notified, { inApp: true, pushSent: false })
        assert.deepStrictEqual(yield* deliveries(optedOut.room.id), [])
        assert.strictEqual((yield* optedOut.guest.client.api.notifications.list({ query: {} })).unread_count, 1)

        const flagged = yield* invitation
        yield* subscribe(flagged.guest.client, `${service.origin}/push/flag-off`, browserKeys())
        yield* setPushFlag(false)
        const off = yield* flagged.invite.pipe(Effect.ensuring(setPushFlag(true)))
        assert.deepStrictEqual(off.notified, { inApp: true, pushSent: false })
        assert.deepStrictEqual(yield* deliveries(flagged.room.id), [])

        const unsubscribed = yield* invitation
        assert.deepStrictEqual((yield* unsubscribed.invite).notified, { inApp: true, pushSent: false })
        assert.strictEqual(service.received.length, 0)
      }))

    it.effect("a push service error is retried until delivered; 410 or 404 deletes the subscription", () =>
      Effect.gen(function*() {
        const flaky = yield* pushService((count) => (count === 1 ? 503 : 201))
        const w = yield* invitation
        yield* subscribe(w.guest.client, `${flaky.origin}/push/flaky`, browserKeys())
        assert.isTrue((yield* w.invite).notified.pushSent)
        assert.deepStrictEqual(yield* eventually(deliveries(w.room.id), (rows) => rows[0]?.status === "delivered"), [
          { status: "delivered", attempts: 2, last_status_code: 201 }
        ])
        assert.strictEqual(flaky.received.length, 2)

        for (const status of [410, 404]) {
          const gone = yield* pushService(() => status)
          const v = yield* invitation
          yield* subscribe(v.guest.client, `${gone.origin}/push/gone`, browserKeys())
          assert.isTrue((yield* v.invite).notified.pushSent)
          assert.deepStrictEqual(yield* eventually(deliveries(v.room.id), (rows) => rows[0]?.status === "gone"), [
            { status: "gone", attempts: 1, last_status_code: status }
          ])
          assert.deepStrictEqual((yield* v.guest.client.api.push.listSubscriptions()).subscriptions, [])
        }
      }))
  })
})

/** A delivery as stored. */
const deliveryRow = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<
      { status: string; attempts: number; claim_token: string | null; last_status_code: number | null }
    >`SELECT status, attempts, claim_token, last_status_code FROM push_deliveries WHERE id = ${id}`
    return row
  }).pipe(Effect.orDie)

/** Queues one push for `member`'s browsers, as an invitation does; the ids queued. */
const queuePush = (member: { readonly id: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ tenant_id }] = yield* sql<{ tenant_id: string }>`SELECT tenant_id FROM users WHERE id = ${member.id}`
    yield* (yield* PushDeliveriesRepo).enqueueForUser({
      tenantId: tenant_id,
      userId: member.id,
      notificationId: null,
      payload: { type: "test" }
    })
    const rows = yield* sql<{ id: string }>`
      SELECT d.id FROM push_deliveries d JOIN push_subscriptions s ON s.id = d.subscription_id
      WHERE s.user_id = ${member.id}`
    return rows.map((row) => row.id)
  }).pipe(Effect.orDie)

/** Claims due deliveries until `id` is among them (the claim may take others first); that claim. */
const claimOf = (id: string) =>
  Effect.gen(function*() {
    const repo = yield* PushDeliveriesRepo
    const claimed = yield* repo.claim(100, 60)
    const mine = claimed.find((claim) => claim.id === id)
    assert.isDefined(mine, `delivery ${id} was due`)
    return mine!
  }).pipe(Effect.orDie)

// ROLE api: no background worker sends what these tests queue, or races the claims they make themselves.
layer(testServer({ ...env, ROLE: "api" }), serverSuite)("Web Push without a delivery worker", (it) => {
  it.effect("an endpoint stays with its account: another user or tenant gets 409 PushEndpointTaken, unless it presents the subscription's own keys", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* person("Owner")
      const browser = browserKeys()
      const endpoint = `https://push.example.net/send/${crypto.randomUUID()}`
      const original = yield* subscribe(owner.client, endpoint, browser)
      const stored = sql<{ user_id: string; p256dh: string; auth: string }>`
        SELECT user_id, p256dh, auth FROM push_subscriptions WHERE endpoint = ${endpoint}`.pipe(Effect.orDie)
      const before = yield* stored

      // Someone who learned the URL: another user of the tenant, or of another tenant, with keys of their own.
      const colleague = yield* person("Colleague")
      const other = yield* secondTenant()
      for (const intruder of [colleague.client, other.client]) {
        const refused = yield* register(intruder, endpoint, browserKeys()).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "PushEndpointTaken")
        assert.match(messageOf(refused), /another account/)
        assert.deepStrictEqual(yield* subscriptionIds(intruder), [])
      }
      assert.deepStrictEqual(yield* stored, before)
      assert.deepStrictEqual(yield* subscriptionIds(owner.client), [original.id])

      // The same browser profile, signed in to another account, hands over the same subscription: it moves,
      // as a new subscription, and the push still queued for the previous account is dropped.
      const [queued] = yield* queuePush(owner)
      const moved = yield* subscribe(colleague.client, endpoint, browser)
      assert.notStrictEqual(moved.id, original.id)
      assert.deepStrictEqual(yield* subscriptionIds(owner.client), [])
      assert.deepStrictEqual(yield* subscriptionIds(colleague.client), [moved.id])
      const [dropped] = yield* sql<{ subscription_id: string | null }>`
        SELECT subscription_id FROM push_deliveries WHERE id = ${queued}`
      assert.isNull(dropped.subscription_id)
      // Padded base64url is the same key; across tenants too.
      const padded = yield* other.client.api.push.subscribe({
        payload: {
          endpoint,
          keys: {
            p256dh: `${browser.publicKey.toString("base64url")}=`,
            auth: `${browser.auth.toString("base64url")}==`
          }
        }
      })
      assert.deepStrictEqual(yield* subscriptionIds(colleague.client), [])
      assert.deepStrictEqual(yield* subscriptionIds(other.client), [padded.id])
      // The owner, who no longer holds it, is refused in turn when presenting keys of another subscription.
      const back = yield* register(owner.client, endpoint, browserKeys()).pipe(Effect.flip)
      assert.strictEqual(back._tag, "PushEndpointTaken")
    }).pipe(Effect.orDie))

  it.effect("an outcome or a release written with a stale claim token changes nothing; the current claim's is recorded", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* PushDeliveriesRepo
      const member = yield* person("Leased")
      yield* subscribe(member.client, `https://push.example.net/send/${crypto.randomUUID()}`, browserKeys())
      const [id] = yield* queuePush(member)
      const stale = yield* claimOf(id)
      // The first worker was too slow: its lease ran out and another worker took the delivery over.
      yield* sql`UPDATE push_deliveries SET locked_until = now() - interval '1 second' WHERE id = ${id}`
      const current = yield* claimOf(id)
      assert.notStrictEqual(current.claim_token, stale.claim_token)
      const held = { status: "sending", attempts: 2, claim_token: current.claim_token, last_status_code: null }
      assert.deepStrictEqual(yield* deliveryRow(id), held)

      const late: ReadonlyArray<(claim: ClaimedPush) => Effect.Effect<void, unknown>> = [
        (claim) => repo.delivered(claim, 201),
        (claim) => repo.retryLater(claim, 1000, 503, "the push service answered 503"),
        (claim) => repo.finish(claim, "failed", 400, "the push service refused it with 400"),
        (claim) => repo.finish(claim, "gone", 410, "gone"),
        (claim) => repo.release(claim, { attempted: false })
      ]
      for (const write of late) {
        yield* write(stale)
        assert.deepStrictEqual(yield* deliveryRow(id), held)
      }
      yield* repo.delivered(current, 201)
      assert.deepStrictEqual(yield* deliveryRow(id), {
        status: "delivered",
        attempts: 2,
        claim_token: null,
        last_status_code: 201
      })
      // Recorded once: the current claim, now spent, changes nothing either.
      yield* repo.finish(current, "failed", 400, "late")
      assert.strictEqual((yield* deliveryRow(id)).status, "delivered")
    }).pipe(Effect.orDie))

  it.effect("a worker stopped during the POST gives the lease back with the attempt counted; the push is sent again under the same Topic", () =>
    Effect.gen(function*() {
      const delivery = yield* PushDelivery
      // The first POST never gets an answer; the next ones are accepted.
      const service = yield* pushService((count) => (count === 1 ? 0 : 201))
      const member = yield* person("Stopped")
      yield* subscribe(member.client, `${service.origin}/push/stopped`, browserKeys())
      const [id] = yield* queuePush(member)
      const cycle = yield* Effect.forkChild(delivery.deliverDue)
      yield* eventually(Effect.sync(() => service.received.length), (n) => n === 1)
      yield* Fiber.interrupt(cycle)
      assert.deepStrictEqual(yield* deliveryRow(id), {
        status: "pending",
        attempts: 1,
        claim_token: null,
        last_status_code: null
      })
      yield* delivery.deliverDue
      assert.deepInclude(yield* deliveryRow(id), { status: "delivered", attempts: 2, last_status_code: 201 })
      assert.strictEqual(service.received.length, 2)
      const topics = service.received.map((request) => request.headers.topic)
      assert.deepStrictEqual(topics, [id.replace(/-/g, ""), id.replace(/-/g, "")])
    }))
})

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-vapid-"))

layer(testServer({ DATA_DIR: dataDir }), serverSuite)("Web Push without VAPID_* configured", (it) => {
  it.effect("embedded: a key pair is generated once into DATA_DIR (0600) and kept; PostgreSQL: once into the database, the same for every caller", () =>
    Effect.gen(function*() {
      const mode = yield* DatabaseMode
      const admin = yield* adminClient
      const file = join(dataDir, "vapid-keys.json")
      if (mode.kind === "embedded") {
        const first = yield* admin.api.push.vapidPublicKey()
        const stored = JSON.parse(readFileSync(file, "utf8")) as { publicKey: string; privateKey: string }
        assert.strictEqual(first.public_key, stored.publicKey)
        assert.strictEqual(Buffer.from(stored.privateKey, "base64url").length, 32)
        assert.strictEqual(statSync(file).mode & 0o777, 0o600)
        assert.deepStrictEqual(yield* admin.api.push.vapidPublicKey(), first)
      } else {
        // Concurrent first calls (as from several replicas) all get the one pair the database kept.
        const keys = yield* Effect.all(Array.from({ length: 5 }, () => admin.api.push.vapidPublicKey()), {
          concurrency: "unbounded"
        })
        assert.strictEqual(new Set(keys.map((key) => key.public_key)).size, 1)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<
          { public_key: string; private_key_encrypted: string }
        >`SELECT public_key, private_key_encrypted FROM vapid_keys`
        assert.strictEqual(rows.length, 1)
        assert.strictEqual(rows[0].public_key, keys[0].public_key)
        // Stored encrypted; decrypted, it is the private half of a pair web-push accepts.
        const encryption = yield* Encryption
        const privateKey = yield* encryption.decrypt(rows[0].private_key_encrypted)
        assert.notStrictEqual(rows[0].private_key_encrypted, privateKey)
        assert.isUndefined(
          vapidProblem({ publicKey: rows[0].public_key, privateKey, subject: "mailto:admin@example.com" })
        )
        assert.isFalse(existsSync(file))
      }
    }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))))
})
