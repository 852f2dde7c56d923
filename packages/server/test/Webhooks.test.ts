/**
 * Outbound webhook subscriptions over HTTP (spec: `/api/webhook-subs`, its log
 * and retry; issue #4: PATCH, DELETE, https only unless private networks are
 * allowed), and the whole path from an execution to a signed delivery,
 * through the SDK against the test server (its jobs worker delivers) and real
 * local receivers.
 */
import type { Webhooks } from "@agent-platform/domain"
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHmac, timingSafeEqual } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { jsonAnswer, localServer, type Received } from "./LocalHttp.ts"
import {
  adminClient,
  createKey,
  http,
  json,
  layer as testServer,
  messageOf,
  secondTenant,
  serverSuite,
  sessionCookie,
  signIn,
  TestServer
} from "./TestServer.ts"

/** Subscribes for this test only: the subscription is deleted when the test ends, so later tests' events skip it. */
const subscribe = (payload: typeof Webhooks.CreateWebhookSubscription.Type) =>
  Effect.gen(function*() {
    const as = yield* adminClient
    const created = yield* as.api.webhooks.create({ payload })
    yield* Effect.addFinalizer(() => as.api.webhooks.delete({ params: { id: created.id } }).pipe(Effect.ignore))
    return created
  })

/** Runs an action that succeeds (`on_action_executed`) or fails (`on_action_failed`) with an API key. */
const fireEvent = (success: boolean) =>
  Effect.gen(function*() {
    const target = yield* localServer(() => jsonAnswer(success ? 200 : 500, { ok: success }))
    const as = yield* adminClient
    const action = yield* as.api.actionsAdmin.create({
      payload: { name: "notify", description: "", http_method: "GET", url: target.url, parameters: [], is_active: true }
    })
    const { key } = yield* createKey(["actions"])
    const server = yield* TestServer
    const client = yield* server.client({ apiKey: key })
    yield* client.api.actions.execute({ params: { id: action.id }, payload: {} }).pipe(Effect.ignore)
    return action
  }).pipe(Effect.orDie)

/** Repeats `read` until `done` holds (the jobs worker polls every second). */
const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (value: A) => boolean) =>
  read.pipe(
    Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: done }),
    Effect.timeoutOrElse({
      duration: Duration.seconds(20),
      orElse: () => Effect.die(new Error("condition not reached in 20 s"))
    })
  )

const logOf = (id: string, query: { readonly limit?: number; readonly cursor?: string } = {}) =>
  Effect.flatMap(adminClient, (as) => as.api.webhooks.log({ params: { id }, query }))

const subscriptionOf = (id: string) =>
  Effect.flatMap(
    adminClient,
    (as) => Effect.map(as.api.webhooks.list(), ({ subscriptions }) => subscriptions.find((s) => s.id === id)!)
  )

/** Verifies `X-Service-Signature` as a receiver would: HMAC-SHA256(secret, `<X-Service-Timestamp>.<raw body>`). */
const signatureValid = (request: Received, secret: string) => {
  const timestamp = String(request.headers["x-service-timestamp"])
  const expected = Buffer.from(
    `sha256=${createHmac("sha256", secret).update(`${timestamp}.${request.body}`).digest("hex")}`
  )
  const given = Buffer.from(String(request.headers["x-service-signature"]))
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const secret = "whsec-0123456789abcdef"

/** The `X-Service-Signature` values of a delivery (several during a rotation window). */
const serviceSignatures = (request: Received) => String(request.headers["x-service-signature"]).split(",")

/** Verifies a delivery as the `standardwebhooks` package does; `raw` for a secret not in `whsec_` form. */
const standardVerifies = (request: Received, key: string, raw = false) => {
  try {
    new Webhook(key, raw ? { format: "raw" } : undefined).verify(
      request.body,
      request.headers as Record<string, string>
    )
    return true
  } catch {
    return false
  }
}

/** Fires one event and waits until `remote` received it; answers that request. */
const deliveredTo = (remote: { readonly received: Array<Received> }) =>
  Effect.gen(function*() {
    const before = remote.received.length
    yield* fireEvent(true)
    yield* eventually(Effect.sync(() => remote.received.length), (count) => count > before)
    return remote.received[before]
  })

layer(testServer({ WEBHOOK_MAX_ATTEMPTS: "2", WEBHOOK_RETRY_BASE_MS: "100" }), serverSuite)(
  "webhook subscriptions",
  (it) => {
    describe("POST /api/webhook-subs", () => {
      it.effect("subscribes (201) with `*` by default; the signing secret is never returned; a tenant_id in the body has no effect", () =>
        Effect.gen(function*() {
          const as = yield* adminClient
          const response = yield* http(
            "/api/webhook-subs",
            json("POST", {
              name: "CRM",
              url: "http://127.0.0.1:9/hook",
              signing_secret: secret,
              tenant_id: "00000000-0000-0000-0000-000000000000"
            }, { cookie: yield* sessionCookie(as) })
          )
          assert.strictEqual(response.status, 201)
          assert.deepInclude(response.body, {
            name: "CRM",
            url: "http://127.0.0.1:9/hook",
            event_filter: "*",
            is_active: true,
            has_signing_secret: true,
            total_delivered: 0,
            total_dead_letter: 0
          })
          assert.notInclude(JSON.stringify(response.body), secret)
          const listed = yield* as.api.webhooks.list()
          assert.notInclude(JSON.stringify(listed), secret)
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ tenant_id: string; signing_secret: string }>`
          SELECT tenant_id, signing_secret FROM webhook_subscriptions WHERE id = ${response.body.id}`
          assert.notStrictEqual(row.tenant_id, "00000000-0000-0000-0000-000000000000")
          assert.notInclude(row.signing_secret, secret)
          yield* as.api.webhooks.delete({ params: { id: response.body.id } })
        }))

      it.effect("400 names the field: a URL that is not one, an unknown event filter, a short secret", () =>
        Effect.gen(function*() {
          const cookie = yield* Effect.flatMap(adminClient, sessionCookie)
          const notUrl = yield* http("/api/webhook-subs", json("POST", { name: "x", url: "not a url" }, { cookie }))
          assert.strictEqual(notUrl.status, 400)
          assert.match(notUrl.body.error, /url/)
          const filter = yield* http(
            "/api/webhook-subs",
            json("POST", { name: "x", url: "https://8.8.8.8/", event_filter: "on_everything" }, { cookie })
          )
          assert.strictEqual(filter.status, 400)
          assert.match(filter.body.error, /event_filter/)
          const short = yield* http(
            "/api/webhook-subs",
            json("POST", { name: "x", url: "https://8.8.8.8/", signing_secret: "fifteen-chars-x" }, { cookie })
          )
          assert.strictEqual(short.status, 400)
          assert.match(short.body.error, /signing_secret: Expected a value of 16 to 256 characters/)
          // The contract publishes the rule the server applies (effect's own check would publish minLength 8).
          const contract = yield* http("/openapi.json")
          const created = contract.body.paths["/api/webhook-subs"].post.requestBody.content["application/json"].schema
          const secret = created.properties.signing_secret.anyOf.find((s: { type?: string }) => s.type === "string")
          assert.deepInclude(secret, { minLength: 16, maxLength: 256 })
          for (const hostless of ["http:///hook", "https:8.8.8.8/hook", "https://:443/hook"]) {
            const refused = yield* http("/api/webhook-subs", json("POST", { name: "x", url: hostless }, { cookie }))
            assert.strictEqual(refused.status, 400, hostless)
            assert.match(refused.body.error, /`url` is not a valid absolute URL with a host/)
          }
          const nul = yield* http(
            "/api/webhook-subs",
            json("POST", { name: "a\u0000b", url: "https://8.8.8.8/" }, { cookie })
          )
          assert.strictEqual(nul.status, 400)
          assert.match(nul.body.error, /name: must not contain NUL/)
          const ftp = yield* http("/api/webhook-subs", json("POST", { name: "x", url: "ftp://8.8.8.8/" }, { cookie }))
          assert.strictEqual(ftp.status, 400)
          assert.match(ftp.body.error, /`url` must be an http or https URL/)
        }))

      it.effect("administrators only: 401 without a session, 403 for a user and for an API key", () =>
        Effect.gen(function*() {
          assert.strictEqual((yield* http("/api/webhook-subs")).status, 401)
          const as = yield* adminClient
          yield* as.api.admin.createUser({
            payload: { email: "hooks-user@example.com", nombre: "U", password: "Correct-Horse-9", role_id: "r_user" }
          })
          const user = yield* signIn("hooks-user@example.com", "Correct-Horse-9")
          const error = yield* user.api.webhooks.list().pipe(Effect.flip)
          assert.strictEqual(error._tag, "RoleMissing")
          const { key } = yield* createKey(["actions"])
          const withKey = yield* http("/api/webhook-subs", { headers: { authorization: `Bearer ${key}` } })
          assert.strictEqual(withKey.status, 403)
        }))
    })

    describe("an execution, end to end", () => {
      it.effect("is delivered signed to the subscriptions whose filter matches; the receiver verifies the signature with node:crypto", () =>
        Effect.gen(function*() {
          const receiver = yield* localServer(() => ({ status: 204 }))
          const executedOnly = yield* subscribe({
            name: "executed",
            url: `${receiver.url}/executed`,
            event_filter: "on_action_executed",
            signing_secret: secret
          })
          const failedOnly = yield* subscribe({
            name: "failed",
            url: `${receiver.url}/failed`,
            event_filter: "on_action_failed"
          })
          const action = yield* fireEvent(true)
          yield* receiver.waitFor(1).pipe(Effect.timeout("20 seconds"))
          const [delivery] = receiver.received
          assert.strictEqual(delivery.url, "/executed")
          assert.isTrue(signatureValid(delivery, secret))
          assert.isFalse(signatureValid(delivery, "another-secret-0000"))
          assert.strictEqual(delivery.headers["x-service-event"], "on_action_executed")
          const body = JSON.parse(delivery.body)
          assert.deepStrictEqual(Object.keys(body).sort(), ["created_at", "data", "event", "id", "tenant_id"])
          assert.strictEqual(body.event, "on_action_executed")
          assert.strictEqual(body.data.action_id, action.id)
          assert.strictEqual(body.data.success, true)
          assert.strictEqual(body.data.supervision, "autonomous")
          const log = yield* eventually(
            logOf(executedOnly.id),
            ({ deliveries }) => deliveries[0]?.status === "delivered"
          )
          assert.strictEqual(log.deliveries[0].id, delivery.headers["x-service-delivery"])
          assert.deepInclude(log.deliveries[0], {
            event: "on_action_executed",
            attempts: 1,
            last_status_code: 204,
            last_error: null
          })
          assert.strictEqual((yield* subscriptionOf(executedOnly.id)).total_delivered, 1)
          // The failed-only subscription got nothing; a failure reaches it, unsigned.
          assert.deepStrictEqual((yield* logOf(failedOnly.id)).deliveries, [])
          yield* fireEvent(false)
          yield* receiver.waitFor(2).pipe(Effect.timeout("20 seconds"))
          assert.strictEqual(receiver.received[1].url, "/failed")
          assert.strictEqual(receiver.received[1].headers["x-service-event"], "on_action_failed")
          assert.isUndefined(receiver.received[1].headers["x-service-signature"])
        }))
    })

    describe("GET /api/webhook-subs and PATCH /api/webhook-subs/{id}", () => {
      it.effect("lists subscriptions with their counters; is_active false stops deliveries, true resumes them", () =>
        Effect.gen(function*() {
          const receiver = yield* localServer(() => ({ status: 200 }))
          const subscription = yield* subscribe({ name: "toggled", url: receiver.url })
          const as = yield* adminClient
          const paused = yield* as.api.webhooks.update({
            params: { id: subscription.id },
            payload: { is_active: false }
          })
          assert.isFalse(paused.is_active)
          yield* fireEvent(true)
          assert.deepStrictEqual((yield* logOf(subscription.id)).deliveries, [])
          const resumed = yield* as.api.webhooks.update({
            params: { id: subscription.id },
            payload: { is_active: true, name: "renamed" }
          })
          assert.deepInclude(resumed, { is_active: true, name: "renamed" })
          yield* fireEvent(true)
          yield* eventually(subscriptionOf(subscription.id), (s) => s.total_delivered === 1)
          const listed = yield* subscriptionOf(subscription.id)
          assert.deepInclude(listed, { name: "renamed", is_active: true, total_delivered: 1, total_dead_letter: 0 })
        }))

      it.effect("404 for an unknown, malformed or foreign subscription; a URL change is checked like a new one", () =>
        Effect.gen(function*() {
          const as = yield* adminClient
          for (const id of [crypto.randomUUID(), "nope"]) {
            const error = yield* as.api.webhooks.update({ params: { id }, payload: { is_active: false } }).pipe(
              Effect.flip
            )
            assert.strictEqual(error._tag, "NotFound")
          }
          const subscription = yield* subscribe({ name: "mine", url: "http://127.0.0.1:9/" })
          const bad = yield* as.api.webhooks.update({
            params: { id: subscription.id },
            payload: { url: "ftp://127.0.0.1/" }
          }).pipe(Effect.flip)
          assert.strictEqual(bad._tag, "InvalidRequest")
          const other = yield* secondTenant()
          const foreign = yield* other.client.api.webhooks.update({
            params: { id: subscription.id },
            payload: { is_active: false }
          }).pipe(Effect.flip)
          assert.strictEqual(foreign._tag, "NotFound")
          assert.isFalse((yield* other.client.api.webhooks.list()).subscriptions.some((s) => s.id === subscription.id))
          const log = yield* other.client.api.webhooks.log({ params: { id: subscription.id }, query: {} }).pipe(
            Effect.flip
          )
          const retry = yield* other.client.api.webhooks.retry({
            params: { id: subscription.id },
            payload: { delivery_id: crypto.randomUUID() }
          })
            .pipe(Effect.flip)
          const remove = yield* other.client.api.webhooks.delete({ params: { id: subscription.id } }).pipe(Effect.flip)
          assert.deepStrictEqual([log._tag, retry._tag, remove._tag], ["NotFound", "NotFound", "NotFound"])
          assert.isTrue((yield* subscriptionOf(subscription.id)).is_active)
        }))
    })

    describe("DELETE /api/webhook-subs/{id}", () => {
      it.effect("deletes the subscription and its log; then 404", () =>
        Effect.gen(function*() {
          const as = yield* adminClient
          const created = yield* as.api.webhooks.create({ payload: { name: "gone soon", url: "http://127.0.0.1:9/" } })
          const deleted = yield* as.api.webhooks.delete({ params: { id: created.id } })
          assert.isTrue(deleted.success)
          assert.isFalse((yield* as.api.webhooks.list()).subscriptions.some((s) => s.id === created.id))
          const again = yield* as.api.webhooks.delete({ params: { id: created.id } }).pipe(Effect.flip)
          assert.strictEqual(again._tag, "NotFound")
          const log = yield* as.api.webhooks.log({ params: { id: created.id }, query: {} }).pipe(Effect.flip)
          assert.strictEqual(log._tag, "NotFound")
        }))
    })

    describe("GET /api/webhook-subs/{id}/log", () => {
      it.effect("pages the deliveries newest first with next_cursor; 400 for a bad limit or cursor", () =>
        Effect.gen(function*() {
          const receiver = yield* localServer(() => ({ status: 200 }))
          const subscription = yield* subscribe({ name: "paged", url: receiver.url })
          // The next sequence numbers cross a power of ten (…, 99, 100, 101): as text, "99" sorts after "101".
          const sql = yield* SqlClient.SqlClient
          yield* sql`
            SELECT setval(pg_get_serial_sequence('webhook_deliveries', 'seq'),
                          power(10, length((SELECT coalesce(max(seq), 0) + 3 FROM webhook_deliveries)::text))::bigint - 2)`
          for (let i = 0; i < 3; i++) yield* fireEvent(i !== 1)
          yield* receiver.waitFor(3).pipe(Effect.timeout("20 seconds"))
          const one = yield* logOf(subscription.id, { limit: 1 })
          const two = yield* logOf(subscription.id, { limit: 1, cursor: one.next_cursor! })
          const three = yield* logOf(subscription.id, { limit: 1, cursor: two.next_cursor! })
          assert.isNull(three.next_cursor)
          const queued = yield* sql<{ id: string }>`
            SELECT id FROM webhook_deliveries WHERE subscription_id = ${subscription.id} ORDER BY seq DESC`
          assert.deepStrictEqual(
            [...one.deliveries, ...two.deliveries, ...three.deliveries].map((d) => d.id),
            queued.map((row) => row.id),
            "one at a time, newest first"
          )
          const first = yield* logOf(subscription.id, { limit: 2 })
          assert.strictEqual(first.deliveries.length, 2)
          assert.isNotNull(first.next_cursor)
          const second = yield* logOf(subscription.id, { limit: 2, cursor: first.next_cursor! })
          assert.strictEqual(second.deliveries.length, 1)
          assert.isNull(second.next_cursor)
          const events = [...first.deliveries, ...second.deliveries].map((d) => d.event)
          assert.deepStrictEqual(events, ["on_action_executed", "on_action_failed", "on_action_executed"])
          const ids = new Set([...first.deliveries, ...second.deliveries].map((d) => d.id))
          assert.strictEqual(ids.size, 3)
          const cookie = yield* Effect.flatMap(adminClient, sessionCookie)
          const badLimit = yield* http(`/api/webhook-subs/${subscription.id}/log?limit=0`, { headers: { cookie } })
          assert.strictEqual(badLimit.status, 400)
          assert.match(badLimit.body.error, /limit/)
          const badCursor = yield* logOf(subscription.id, { cursor: "abc" }).pipe(Effect.flip)
          assert.strictEqual(badCursor._tag, "InvalidRequest")
          assert.match(messageOf(badCursor), /cursor/)
        }))
    })

    describe("POST /api/webhook-subs/{id}/retry", () => {
      it.effect("schedules a dead letter again (200), which is then delivered; 409 when it is not dead; 404 for an unknown delivery", () =>
        Effect.gen(function*() {
          const receiver = yield* localServer(() => ({ status: 500, body: "down" }))
          const subscription = yield* subscribe({ name: "flaky", url: receiver.url })
          yield* fireEvent(true)
          const dead = yield* eventually(
            logOf(subscription.id),
            ({ deliveries }) => deliveries[0]?.status === "dead_letter"
          )
          const deliveryId = dead.deliveries[0].id
          assert.deepInclude(dead.deliveries[0], { attempts: 2, last_status_code: 500 })
          assert.match(dead.deliveries[0].last_error!, /receiver answered HTTP 500: down/)
          assert.strictEqual((yield* subscriptionOf(subscription.id)).total_dead_letter, 1)

          receiver.answer = () => ({ status: 200 })
          const as = yield* adminClient
          const scheduled = yield* as.api.webhooks.retry({
            params: { id: subscription.id },
            payload: { delivery_id: deliveryId }
          })
          assert.deepStrictEqual(scheduled, {
            success: true,
            delivery_id: deliveryId,
            status: "pending",
            message: "retry scheduled"
          })
          yield* eventually(logOf(subscription.id), ({ deliveries }) => deliveries[0]?.status === "delivered")
          assert.strictEqual(receiver.received.at(-1)!.headers["x-service-delivery"], deliveryId)
          assert.deepInclude(yield* subscriptionOf(subscription.id), { total_delivered: 1, total_dead_letter: 1 })

          const conflict = yield* as.api.webhooks.retry({
            params: { id: subscription.id },
            payload: { delivery_id: deliveryId }
          }).pipe(Effect.flip)
          assert.strictEqual(conflict._tag, "Conflict")
          assert.match(messageOf(conflict), /delivered, not dead_letter/)
          for (const unknown of [crypto.randomUUID(), "not-an-id"]) {
            const error = yield* as.api.webhooks.retry({
              params: { id: subscription.id },
              payload: { delivery_id: unknown }
            }).pipe(Effect.flip)
            assert.strictEqual(error._tag, "NotFound")
          }
          const cookie = yield* sessionCookie(as)
          const missingBody = yield* http(`/api/webhook-subs/${subscription.id}/retry`, json("POST", {}, { cookie }))
          assert.strictEqual(missingBody.status, 400)
          assert.match(missingBody.body.error, /delivery_id/)
        }))
    })

    describe("Standard Webhooks", () => {
      it.effect("every delivery carries webhook-id, webhook-timestamp and webhook-signature that the standardwebhooks package verifies", () =>
        Effect.gen(function*() {
          const standard = `whsec_${Buffer.from("a standard secret of 32 bytes!!!").toString("base64")}`
          const remote = yield* localServer(() => ({ status: 200 }))
          yield* subscribe({ name: "standard", url: `${remote.url}/hook`, signing_secret: standard })
          const request = yield* deliveredTo(remote)
          assert.strictEqual(request.headers["webhook-id"], request.headers["x-service-delivery"])
          assert.strictEqual(request.headers["webhook-timestamp"], request.headers["x-service-timestamp"])
          assert.match(String(request.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]+=*$/)
          assert.isTrue(standardVerifies(request, standard))
          assert.isFalse(
            standardVerifies(
              { ...request, body: request.body.replace("on_action_executed", "on_action_failed") },
              standard
            )
          )
          assert.isTrue(signatureValid(request, standard))
        }))

      it.effect("a secret not in whsec_ form verifies with format raw, and X-Service-Signature still verifies", () =>
        Effect.gen(function*() {
          const remote = yield* localServer(() => ({ status: 200 }))
          yield* subscribe({ name: "raw secret", url: `${remote.url}/hook`, signing_secret: secret })
          const request = yield* deliveredTo(remote)
          assert.isTrue(standardVerifies(request, secret, true))
          assert.isTrue(signatureValid(request, secret))
        }))

      it.effect("an unsigned subscription's deliveries carry the ids and timestamps but no signature", () =>
        Effect.gen(function*() {
          const remote = yield* localServer(() => ({ status: 200 }))
          yield* subscribe({ name: "unsigned", url: `${remote.url}/hook` })
          const request = yield* deliveredTo(remote)
          assert.isString(request.headers["webhook-id"])
          assert.isUndefined(request.headers["webhook-signature"])
          assert.isUndefined(request.headers["x-service-signature"])
        }))
    })

    describe("POST /api/webhook-subs/{id}/rotate-secret", () => {
      it.effect("makes a new secret current and signs with both until the window ends; window 0 ends it at once", () =>
        Effect.gen(function*() {
          const as = yield* adminClient
          const remote = yield* localServer(() => ({ status: 200 }))
          const first = "the first secret, 32 characters"
          const second = "the second secret, 33 characters"
          const subscription = yield* subscribe({ name: "rotating", url: `${remote.url}/hook`, signing_secret: first })
          assert.isNull(subscription.previous_secret_expires_at)

          const rotated = yield* as.api.webhooks.rotateSecret({
            params: { id: subscription.id },
            payload: { signing_secret: second }
          })
          assert.strictEqual(rotated.signing_secret, second)
          const window = Date.parse(rotated.previous_secret_expires_at!) - Date.now()
          assert.isTrue(window > 23 * 3600_000 && window <= 24 * 3600_000, `one day by default, got ${window} ms`)
          assert.strictEqual(
            (yield* subscriptionOf(subscription.id)).previous_secret_expires_at,
            rotated.previous_secret_expires_at
          )

          const during = yield* deliveredTo(remote)
          assert.lengthOf(serviceSignatures(during), 2)
          assert.lengthOf(String(during.headers["webhook-signature"]).split(" "), 2)
          for (const key of [first, second]) {
            assert.isTrue(standardVerifies(during, key, true), `standardwebhooks with ${key}`)
            const expected = `sha256=${
              createHmac("sha256", key).update(`${during.headers["x-service-timestamp"]}.${during.body}`).digest("hex")
            }`
            assert.include(serviceSignatures(during), expected)
          }
          // The current secret signs first.
          assert.isTrue(
            signatureValid({
              ...during,
              headers: { ...during.headers, "x-service-signature": serviceSignatures(during)[0] }
            }, second)
          )

          const generated = yield* as.api.webhooks.rotateSecret({
            params: { id: subscription.id },
            payload: { previous_secret_valid_for_seconds: 0 }
          })
          assert.match(generated.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
          const after = yield* deliveredTo(remote)
          assert.lengthOf(serviceSignatures(after), 1)
          assert.isTrue(standardVerifies(after, generated.signing_secret))
          assert.isFalse(standardVerifies(after, second, true))
        }))

      it.effect("two rotations at once both apply in turn: the later current, the earlier previous, the original gone", () =>
        Effect.gen(function*() {
          const as = yield* adminClient
          const remote = yield* localServer(() => ({ status: 200 }))
          const original = "the original secret of the test"
          const subscription = yield* subscribe({ name: "raced", url: `${remote.url}/hook`, signing_secret: original })
          const secrets = ["concurrent rotation secret one", "concurrent rotation secret two"]
          const results = yield* Effect.forEach(
            secrets,
            (next) =>
              as.api.webhooks.rotateSecret({ params: { id: subscription.id }, payload: { signing_secret: next } }),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(results.map((r) => r.signing_secret), secrets)
          const request = yield* deliveredTo(remote)
          const verifying = [original, ...secrets].filter((key) => standardVerifies(request, key, true))
          assert.sameMembers(verifying, secrets)
          assert.lengthOf(serviceSignatures(request), 2)
        }))

      it.effect("gives an unsigned subscription its first secret; 404 for an unknown one; 400 for a window over 7 days", () =>
        Effect.gen(function*() {
          const as = yield* adminClient
          const subscription = yield* subscribe({ name: "first secret", url: "http://127.0.0.1:9/hook" })
          const rotated = yield* as.api.webhooks.rotateSecret({ params: { id: subscription.id }, payload: {} })
          assert.isNull(rotated.previous_secret_expires_at)
          assert.isTrue(rotated.subscription.has_signing_secret)
          const missing = yield* as.api.webhooks.rotateSecret({ params: { id: crypto.randomUUID() }, payload: {} })
            .pipe(Effect.flip)
          assert.strictEqual(missing._tag, "NotFound")
          const cookie = yield* sessionCookie(as)
          const tooLong = yield* http(
            `/api/webhook-subs/${subscription.id}/rotate-secret`,
            json("POST", { previous_secret_valid_for_seconds: 604801 }, { cookie })
          )
          assert.strictEqual(tooLong.status, 400)
          assert.match(tooLong.body.error, /previous_secret_valid_for_seconds/)
          const shortSecret = yield* http(
            `/api/webhook-subs/${subscription.id}/rotate-secret`,
            json("POST", { signing_secret: "short" }, { cookie })
          )
          assert.strictEqual(shortSecret.status, 400)
        }))
    })
  }
)

layer(testServer({ ACTIONS_ALLOW_PRIVATE_NETWORKS: "false" }), serverSuite)(
  "webhook subscriptions without private networks",
  (it) => {
    it.effect("require https and refuse internal addresses (400)", () =>
      Effect.gen(function*() {
        const as = yield* adminClient
        const refused = (url: string) =>
          as.api.webhooks.create({ payload: { name: "x", url } }).pipe(Effect.flip, Effect.map(messageOf))
        assert.strictEqual(yield* refused("http://93.184.215.14/hook"), "`url` must be an https URL")
        assert.match(yield* refused("https://127.0.0.1/hook"), /loopback/)
        assert.match(yield* refused("https://10.1.2.3/hook"), /private/)
        assert.match(yield* refused("https://169.254.169.254/latest"), /metadata|link-local/)
        const created = yield* as.api.webhooks.create({
          payload: { name: "public", url: "https://93.184.215.14/hook" }
        })
        assert.strictEqual(created.url, "https://93.184.215.14/hook")
      }))
  }
)
