/**
 * Outbound webhooks (spec: "Outbound webhooks", `/api/webhook-subs`):
 * subscriptions, the durable delivery queue and its worker, against real
 * local HTTP receivers and the test database.
 */
import type { Webhooks } from "@agent-platform/domain"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHmac, timingSafeEqual } from "node:crypto"
import { ActionRunner } from "../src/Actions/ActionRunner.ts"
import { ServerConfig } from "../src/Platform/Config.ts"
import { WebhookDeliveriesRepo } from "../src/Webhooks/WebhookDeliveriesRepo.ts"
import { WebhookDelivery, WebhookDeliveryWorker } from "../src/Webhooks/WebhookDelivery.ts"
import { type AdminCaller, WebhookSubscriptions } from "../src/Webhooks/WebhookSubscriptions.ts"
import { type Answer, localServer } from "./LocalHttp.ts"
import { layer as testServer, serverSuite } from "./TestServer.ts"

// ---------------------------------------------------------------------------
// Local HTTP receivers

const ok = (): Answer => ({ status: 200 })

// ---------------------------------------------------------------------------
// Tenant, admin, subscriptions and events

const admin = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<
    { tenant_id: string; id: string }
  >`SELECT tenant_id, id FROM users ORDER BY created_at LIMIT 1`
  return { tenantId: row.tenant_id, userId: row.id } satisfies AdminCaller
}).pipe(Effect.orDie)

/** Subscribes for this test only: the subscription is disabled when the test ends, so later tests' cycles skip it. */
const subscribe = (payload: typeof Webhooks.CreateWebhookSubscription.Type) =>
  Effect.gen(function*() {
    const subscriptions = yield* WebhookSubscriptions
    const caller = yield* admin
    const created = yield* subscriptions.create(caller, payload).pipe(Effect.orDie)
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() =>
      sql`UPDATE webhook_subscriptions SET is_active = false WHERE id = ${created.id}`.pipe(Effect.orDie)
    )
    return created
  })

/** Runs an action that succeeds (`on_action_executed`) or fails (`on_action_failed`). */
const fireEvent = (success: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { tenantId } = yield* admin
    const target = yield* localServer(() => ({ status: success ? 200 : 500, body: "{}" }))
    const [action] = yield* sql<{ id: string }>`
      INSERT INTO actions (tenant_id, name, http_method, url) VALUES (${tenantId}, 'notify', 'GET', ${target.url}) RETURNING id`
    const runner = yield* ActionRunner
    const keyId = crypto.randomUUID()
    yield* runner.execute({
      tenantId,
      caller: { kind: "key", keyId, spaceId: null },
      actionId: action.id,
      trigger: { type: "key", keyId, channel: "direct" }
    }).pipe(Effect.ignore)
    return action.id
  }).pipe(Effect.orDie)

interface DeliveryRow {
  readonly id: string
  readonly event: string
  readonly status: string
  readonly attempts: number
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly next_attempt_at: Date | null
  /** next_attempt_at − (last_attempt_at + last_duration_ms): the backoff chosen. */
  readonly backoff_ms: number | null
}

const deliveriesOf = (subscriptionId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<DeliveryRow>`
      SELECT id, event, status, attempts, last_status_code, last_error, next_attempt_at,
        (EXTRACT(EPOCH FROM (next_attempt_at - last_attempt_at)) * 1000 - last_duration_ms)::float8 AS backoff_ms
      FROM webhook_deliveries WHERE subscription_id = ${subscriptionId} ORDER BY seq`
    return rows
  }).pipe(Effect.orDie)

const counters = (subscriptionId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ total_delivered: number; total_dead_letter: number; is_active: boolean }>`
      SELECT total_delivered, total_dead_letter, is_active FROM webhook_subscriptions WHERE id = ${subscriptionId}`
    return row
  }).pipe(Effect.orDie)

const deliverDue = Effect.gen(function*() {
  const delivery = yield* WebhookDelivery
  return yield* delivery.deliverDue()
}).pipe(Effect.orDie)

/** Runs delivery cycles until `done` holds (retries become due a few tens of milliseconds apart). */
const cycleUntil = <R>(done: Effect.Effect<boolean, never, R>) =>
  Effect.gen(function*() {
    for (let cycle = 0; cycle < 500; cycle++) {
      yield* deliverDue
      if (yield* done) return
      yield* Effect.sleep("20 millis")
    }
    assert.fail("the condition never held")
  })

/** Cycles until the subscription's only delivery has made `attempts` attempts. */
const untilAttempts = (subscriptionId: string, attempts: number) =>
  cycleUntil(Effect.map(deliveriesOf(subscriptionId), ([delivery]) => delivery.attempts >= attempts))

/** Queues `count` events for the tenant's subscriptions, as executions do. */
const queueEvents = (count: number) =>
  Effect.gen(function*() {
    const repo = yield* WebhookDeliveriesRepo
    const { tenantId } = yield* admin
    for (let i = 0; i < count; i++) {
      yield* repo.enqueue({
        id: crypto.randomUUID(),
        event: "on_action_executed",
        created_at: new Date().toISOString(),
        tenant_id: tenantId,
        data: { n: i }
      })
    }
  }).pipe(Effect.orDie)

/** Waits, up to 10 s, until the subscription counts `count` deliveries (the workers under test poll only every minute). */
const untilDelivered = (subscriptionId: string, count: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 10_000
    while ((yield* counters(subscriptionId)).total_delivered < count) {
      if (Date.now() > deadline) assert.fail(`fewer than ${count} deliveries after 10 s`)
      yield* Effect.sleep("20 millis")
    }
  })

// ---------------------------------------------------------------------------
// Layers: the services under test, configured like the test server they run on

const servicesFor = (env: Record<string, string>) =>
  Layer.provideMerge(
    Layer.mergeAll(ActionRunner.layer, WebhookSubscriptions.layer, WebhookDelivery.layer, WebhookDeliveriesRepo.layer)
      .pipe(
        Layer.provideMerge(ServerConfig.layer),
        Layer.provide(
          ConfigProvider.layer(ConfigProvider.fromUnknown({ ACTIONS_ALLOW_PRIVATE_NETWORKS: "true", ...env }))
        )
      ),
    testServer(env)
  )

// ROLE api: no background delivery worker races the cycles these tests drive themselves.
const env = {
  ROLE: "api",
  WEBHOOK_RETRY_BASE_MS: "50",
  WEBHOOK_MAX_ATTEMPTS: "3",
  ACTIONS_TIMEOUT_MS: "5000",
  ACTIONS_MAX_RESPONSE_BYTES: "4096"
}

layer(servicesFor(env), serverSuite)("webhook subscriptions", (it) => {
  it.effect("are created without ever returning the secret, listed, updated and deleted, each change audited", () =>
    Effect.gen(function*() {
      const subscriptions = yield* WebhookSubscriptions
      const caller = yield* admin
      const created = yield* subscriptions.create(caller, {
        name: "CRM",
        url: "https://crm.example.com/hooks",
        signing_secret: "0123456789abcdef0123"
      })
      assert.deepInclude(created, {
        name: "CRM",
        url: "https://crm.example.com/hooks",
        event_filter: "*",
        is_active: true,
        has_signing_secret: true,
        total_delivered: 0,
        total_dead_letter: 0
      })
      assert.notInclude(JSON.stringify(created), "0123456789abcdef0123")
      const sql = yield* SqlClient.SqlClient
      const [stored] = yield* sql<
        { signing_secret: string }
      >`SELECT signing_secret FROM webhook_subscriptions WHERE id = ${created.id}`
      assert.notInclude(stored.signing_secret, "0123456789abcdef0123", "stored encrypted")

      const updated = yield* subscriptions.update(caller, created.id, {
        event_filter: "on_action_failed",
        signing_secret: null,
        is_active: false
      })
      assert.deepInclude(updated, { event_filter: "on_action_failed", has_signing_secret: false, is_active: false })
      const listed = yield* subscriptions.list(caller.tenantId)
      assert.deepStrictEqual(listed.subscriptions.find((s) => s.id === created.id), updated)

      assert.deepStrictEqual(yield* subscriptions.remove(caller, created.id), {
        success: true,
        message: `webhook subscription ${created.id} deleted`
      })
      assert.isUndefined((yield* subscriptions.list(caller.tenantId)).subscriptions.find((s) => s.id === created.id))
      const audit = yield* sql<{ event: string; actor: string }>`
        SELECT event, actor FROM admin_audit_log WHERE target = ${`webhook_subscription:${created.id}`} ORDER BY seq`
      assert.deepStrictEqual(audit.map((a) => a.event), [
        "webhook_subscription.created",
        "webhook_subscription.updated",
        "webhook_subscription.deleted"
      ])
      assert.strictEqual(audit[0].actor, `user:${caller.userId}`)
    }))

  it.effect("an unknown subscription is 404 for every operation", () =>
    Effect.gen(function*() {
      const subscriptions = yield* WebhookSubscriptions
      const caller = yield* admin
      for (const id of [crypto.randomUUID(), "not-an-id"]) {
        assert.strictEqual((yield* Effect.flip(subscriptions.update(caller, id, { name: "x" })))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(subscriptions.remove(caller, id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(subscriptions.log(caller.tenantId, id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(subscriptions.retry(caller, id, crypto.randomUUID())))._tag, "NotFound")
      }
    }))

  it.effect("a URL that is not http(s) is refused", () =>
    Effect.gen(function*() {
      const subscriptions = yield* WebhookSubscriptions
      const caller = yield* admin
      for (const url of ["ftp://example.com/hook", "not a url", "file:///etc/passwd"]) {
        const error = yield* Effect.flip(subscriptions.create(caller, { name: "bad", url }))
        assert.strictEqual(error._tag, "InvalidRequest", url)
        assert.include(error.error, "`url`", url)
      }
    }))

  it.effect("the delivery log pages newest first with a cursor", () =>
    Effect.gen(function*() {
      const subscriptions = yield* WebhookSubscriptions
      const caller = yield* admin
      const sub = yield* subscribe({ name: "log", url: "https://example.com/log" })
      for (let i = 0; i < 3; i++) yield* fireEvent(true)
      const all = (yield* deliveriesOf(sub.id)).map((d) => d.id).reverse()
      const first = yield* subscriptions.log(caller.tenantId, sub.id, { limit: 2 })
      assert.deepStrictEqual(first.deliveries.map((d) => d.id), all.slice(0, 2))
      assert.isString(first.next_cursor)
      assert.deepInclude(first.deliveries[0], {
        event: "on_action_executed",
        status: "pending",
        attempts: 0,
        last_status_code: null
      })
      const second = yield* subscriptions.log(caller.tenantId, sub.id, { limit: 2, cursor: first.next_cursor ?? "" })
      assert.deepStrictEqual(second.deliveries.map((d) => d.id), all.slice(2))
      assert.isNull(second.next_cursor)
      assert.strictEqual(
        (yield* Effect.flip(subscriptions.log(caller.tenantId, sub.id, { cursor: "abc" })))._tag,
        "InvalidRequest"
      )
    }))
})

layer(servicesFor({ ...env, ACTIONS_ALLOW_PRIVATE_NETWORKS: "false" }), serverSuite)(
  "webhook subscription URLs without ACTIONS_ALLOW_PRIVATE_NETWORKS",
  (it) => {
    it.effect("must be https and must not reach internal addresses", () =>
      Effect.gen(function*() {
        const subscriptions = yield* WebhookSubscriptions
        const caller = yield* admin
        const refused: Record<string, string> = {
          "http://93.184.215.14/hook": "must be an https URL",
          "https://127.0.0.1/hook": "loopback",
          "https://localhost/hook": "loopback",
          "https://10.0.0.5/hook": "private",
          "https://169.254.169.254/": "metadata"
        }
        for (const [url, reason] of Object.entries(refused)) {
          const error = yield* Effect.flip(subscriptions.create(caller, { name: "internal", url }))
          assert.strictEqual(error._tag, "InvalidRequest", url)
          assert.include(error.error, reason, url)
        }
        const created = yield* subscriptions.create(caller, { name: "public", url: "https://93.184.215.14/hook" })
        assert.strictEqual(created.url, "https://93.184.215.14/hook")
      }))
  }
)

layer(servicesFor(env), serverSuite)("webhook delivery", (it) => {
  describe("what a receiver gets", () => {
    it.effect("a signed POST of {id, event, created_at, tenant_id, data} that the receiver verifies with node:crypto", () =>
      Effect.gen(function*() {
        const secret = "whsec_0123456789abcdef"
        const verified: Array<boolean> = []
        const remote = yield* localServer((request) => {
          const timestamp = request.headers["x-service-timestamp"] as string
          const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${request.body}`).digest("hex")}`
          const given = String(request.headers["x-service-signature"] ?? "")
          verified.push(given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected)))
          return ok()
        })
        const sub = yield* subscribe({ name: "signed", url: `${remote.url}/hook`, signing_secret: secret })
        const actionId = yield* fireEvent(true)
        const batch = yield* deliverDue
        assert.strictEqual(batch.delivered, 1)

        assert.deepStrictEqual(verified, [true])
        const [request] = remote.received
        const [delivery] = yield* deliveriesOf(sub.id)
        const { tenantId } = yield* admin
        const body = JSON.parse(request.body)
        assert.deepStrictEqual(Object.keys(body), ["id", "event", "created_at", "tenant_id", "data"])
        assert.strictEqual(body.event, "on_action_executed")
        assert.strictEqual(body.tenant_id, tenantId)
        assert.strictEqual(body.data.action_id, actionId)
        assert.strictEqual(body.data.success, true)
        assert.strictEqual(request.headers["x-service-event"], "on_action_executed")
        assert.strictEqual(request.headers["x-service-delivery"], delivery.id)
        assert.match(request.headers["x-service-timestamp"] as string, /^\d{10}$/)
        assert.match(request.headers["content-type"] ?? "", /^application\/json/)
        assert.deepInclude(delivery, { status: "delivered", attempts: 1, last_status_code: 200, last_error: null })
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 1, total_dead_letter: 0 })
      }))

    it.effect("a tampered body fails the receiver's verification", () =>
      Effect.gen(function*() {
        const secret = "whsec_0123456789abcdef"
        const remote = yield* localServer(ok)
        yield* subscribe({ name: "tamper", url: `${remote.url}/hook`, signing_secret: secret })
        yield* fireEvent(true)
        yield* deliverDue
        const [request] = remote.received
        const timestamp = request.headers["x-service-timestamp"] as string
        const tampered = request.body.replace("on_action_executed", "on_action_failed")
        const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${tampered}`).digest("hex")}`
        assert.notStrictEqual(request.headers["x-service-signature"], expected)
      }))

    it.effect("without a signing secret no signature header is sent", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(ok)
        yield* subscribe({ name: "unsigned", url: `${remote.url}/hook` })
        yield* fireEvent(true)
        yield* deliverDue
        assert.strictEqual(remote.received.length, 1)
        assert.isUndefined(remote.received[0].headers["x-service-signature"])
      }))

    it.effect("a 2xx with a body longer than ACTIONS_MAX_RESPONSE_BYTES is still delivered", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => ({ status: 200, body: "x".repeat(20_000) }))
        const sub = yield* subscribe({ name: "chatty", url: `${remote.url}/hook` })
        yield* fireEvent(true)
        yield* deliverDue
        assert.deepInclude((yield* deliveriesOf(sub.id))[0], { status: "delivered", attempts: 1 })
      }))

    it.effect("event filters choose the subscriptions that get an event", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(ok)
        const every = yield* subscribe({ name: "all", url: `${remote.url}/hook`, event_filter: "*" })
        const executed = yield* subscribe({
          name: "executed",
          url: `${remote.url}/hook`,
          event_filter: "on_action_executed"
        })
        const failed = yield* subscribe({ name: "failed", url: `${remote.url}/hook`, event_filter: "on_action_failed" })
        yield* fireEvent(true)
        yield* fireEvent(false)
        const events = (id: string) => Effect.map(deliveriesOf(id), (rows) => rows.map((row) => row.event))
        assert.deepStrictEqual(yield* events(every.id), ["on_action_executed", "on_action_failed"])
        assert.deepStrictEqual(yield* events(executed.id), ["on_action_executed"])
        assert.deepStrictEqual(yield* events(failed.id), ["on_action_failed"])
        yield* deliverDue
        assert.sameMembers(remote.received.map((r) => r.headers["x-service-event"]), [
          "on_action_executed",
          "on_action_failed",
          "on_action_executed",
          "on_action_failed"
        ])
      }))
  })

  describe("retries", () => {
    it.effect("a failing receiver is retried after WEBHOOK_RETRY_BASE_MS * 2^(attempt-1) plus jitter, until it answers 2xx", () =>
      Effect.gen(function*() {
        const remote = yield* localServer((_, count) => (count <= 2 ? { status: 500, body: "busy" } : ok()))
        const sub = yield* subscribe({ name: "flaky", url: `${remote.url}/hook` })
        yield* fireEvent(true)

        yield* untilAttempts(sub.id, 1)
        const [afterOne] = yield* deliveriesOf(sub.id)
        assert.deepInclude(afterOne, { status: "pending", attempts: 1, last_status_code: 500 })
        assert.include(afterOne.last_error ?? "", "HTTP 500")
        assert.isAtLeast(afterOne.backoff_ms ?? -1, 50)
        assert.isAtMost(afterOne.backoff_ms ?? Infinity, 62.5)

        yield* untilAttempts(sub.id, 2)
        const [afterTwo] = yield* deliveriesOf(sub.id)
        assert.deepInclude(afterTwo, { status: "pending", attempts: 2 })
        assert.isAtLeast(afterTwo.backoff_ms ?? -1, 100)
        assert.isAtMost(afterTwo.backoff_ms ?? Infinity, 125)

        yield* untilAttempts(sub.id, 3)
        const [delivered] = yield* deliveriesOf(sub.id)
        assert.deepInclude(delivered, {
          status: "delivered",
          attempts: 3,
          last_status_code: 200,
          last_error: null,
          next_attempt_at: null
        })
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 1, total_dead_letter: 0 })
        assert.deepStrictEqual(
          new Set(remote.received.map((r) => r.headers["x-service-delivery"])),
          new Set([delivered.id])
        )
      }))

    it.effect("after WEBHOOK_MAX_ATTEMPTS failures the delivery is dead-lettered and counted once; a retry redelivers it", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => ({ status: 500 }))
        const sub = yield* subscribe({ name: "down", url: `${remote.url}/hook` })
        yield* fireEvent(false)
        yield* untilAttempts(sub.id, 3)
        const [dead] = yield* deliveriesOf(sub.id)
        assert.deepInclude(dead, { status: "dead_letter", attempts: 3, last_status_code: 500, next_attempt_at: null })
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 0, total_dead_letter: 1 })
        yield* deliverDue
        assert.strictEqual(remote.received.length, 3, "a dead letter is not attempted again")

        const subscriptions = yield* WebhookSubscriptions
        const caller = yield* admin
        remote.answer = ok
        assert.deepStrictEqual(yield* subscriptions.retry(caller, sub.id, dead.id), {
          success: true,
          delivery_id: dead.id,
          status: "pending",
          message: "retry scheduled"
        })
        const log = yield* subscriptions.log(caller.tenantId, sub.id)
        assert.deepInclude(log.deliveries[0], { id: dead.id, status: "pending", attempts: 0 })
        yield* cycleUntil(Effect.map(deliveriesOf(sub.id), ([d]) => d.status === "delivered"))
        assert.strictEqual(remote.received.length, 4)
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 1, total_dead_letter: 1 })

        const notDead = yield* Effect.flip(subscriptions.retry(caller, sub.id, dead.id))
        assert.strictEqual(notDead._tag, "Conflict")
        assert.strictEqual(
          (yield* Effect.flip(subscriptions.retry(caller, sub.id, crypto.randomUUID())))._tag,
          "NotFound"
        )
        assert.strictEqual((yield* Effect.flip(subscriptions.retry(caller, sub.id, "nope")))._tag, "NotFound")
        const other = yield* subscribe({ name: "other", url: `${remote.url}/hook` })
        assert.strictEqual((yield* Effect.flip(subscriptions.retry(caller, other.id, dead.id)))._tag, "NotFound")
      }))

    it.effect("410 Gone dead-letters the delivery and disables the subscription, which then gets no new deliveries", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => ({ status: 410 }))
        const sub = yield* subscribe({ name: "gone", url: `${remote.url}/hook` })
        yield* fireEvent(true)
        yield* deliverDue
        const [gone] = yield* deliveriesOf(sub.id)
        assert.deepInclude(gone, { status: "dead_letter", attempts: 1, last_status_code: 410 })
        assert.deepStrictEqual(yield* counters(sub.id), { total_delivered: 0, total_dead_letter: 1, is_active: false })

        yield* fireEvent(true)
        assert.strictEqual((yield* deliveriesOf(sub.id)).length, 1)

        const subscriptions = yield* WebhookSubscriptions
        const caller = yield* admin
        const disabled = yield* Effect.flip(subscriptions.retry(caller, sub.id, gone.id))
        assert.strictEqual(disabled._tag, "Conflict")
        assert.include(disabled.error, "disabled")
        yield* subscriptions.update(caller, sub.id, { is_active: true })
        remote.answer = ok
        yield* subscriptions.retry(caller, sub.id, gone.id)
        yield* cycleUntil(Effect.map(deliveriesOf(sub.id), ([d]) => d.status === "delivered"))
        assert.deepStrictEqual(yield* counters(sub.id), { total_delivered: 1, total_dead_letter: 1, is_active: true })
      }))
  })

  describe("the worker", () => {
    it.effect("the worker layer delivers on its own, several at once, and stops when its scope closes", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(ok)
        const sub = yield* subscribe({ name: "worker", url: `${remote.url}/hook` })
        for (let i = 0; i < 3; i++) yield* fireEvent(true)
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(WebhookDeliveryWorker.layerWith({ pollInterval: "20 millis" }), scope)
        yield* remote.waitFor(3)
        const delivered = Effect.map(deliveriesOf(sub.id), (rows) => rows.every((row) => row.status === "delivered"))
        while (!(yield* delivered)) yield* Effect.sleep("20 millis")
        yield* Scope.close(scope, Exit.void)
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 3 })
      }))

    it.effect("an idle worker sends a newly queued delivery at once, woken by its commit, not at its next poll", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(ok)
        const sub = yield* subscribe({ name: "woken", url: `${remote.url}/hook` })
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(WebhookDeliveryWorker.layerWith({ pollInterval: "60 seconds" }), scope)
        // The first delivery is found by the worker's first look; then it has nothing to do until woken.
        yield* queueEvents(1)
        yield* untilDelivered(sub.id, 1)
        yield* Effect.sleep("200 millis")
        yield* queueEvents(1)
        yield* untilDelivered(sub.id, 2)
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual(remote.received.length, 2)
      }))

    it.effect("a worker interrupted mid-batch gives its leases back, and the deliveries are delivered by the next one", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(() => "hang")
        const sub = yield* subscribe({ name: "interrupted", url: `${remote.url}/hook` })
        for (let i = 0; i < 3; i++) yield* fireEvent(true)
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(
          WebhookDeliveryWorker.layerWith({ pollInterval: "20 millis", visibilityTimeout: "60 seconds" }),
          scope
        )
        yield* remote.waitFor(3)
        assert.deepStrictEqual((yield* deliveriesOf(sub.id)).map((d) => d.status), [
          "delivering",
          "delivering",
          "delivering"
        ])

        yield* Scope.close(scope, Exit.void)
        const released = yield* deliveriesOf(sub.id)
        assert.deepStrictEqual(released.map((d) => [d.status, d.attempts]), [["pending", 0], ["pending", 0], [
          "pending",
          0
        ]])

        remote.answer = ok
        const batch = yield* deliverDue
        assert.strictEqual(batch.delivered, 3)
        assert.deepStrictEqual((yield* deliveriesOf(sub.id)).map((d) => d.status), [
          "delivered",
          "delivered",
          "delivered"
        ])
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 3, total_dead_letter: 0 })
        for (const delivery of released) {
          assert.strictEqual(remote.received.filter((r) => r.headers["x-service-delivery"] === delivery.id).length, 2)
        }
      }))

    it.effect("a delivery leased by a worker that died is taken over after the visibility timeout; the dead worker's late outcome is ignored", () =>
      Effect.gen(function*() {
        const remote = yield* localServer(ok)
        const sub = yield* subscribe({ name: "takeover", url: `${remote.url}/hook` })
        yield* fireEvent(true)
        const repo = yield* WebhookDeliveriesRepo
        // The worker that "dies": it claims and never records anything.
        const [abandoned] = yield* repo.claimDue({ limit: 20, visibilityTimeoutMs: 1500 })
        assert.strictEqual(abandoned.subscription_id, sub.id)

        assert.strictEqual((yield* deliverDue).claimed, 0, "the lease holds until it expires")
        yield* Effect.sleep("1600 millis")
        const batch = yield* deliverDue
        assert.strictEqual(batch.delivered, 1)
        assert.strictEqual(remote.received.length, 1)

        yield* repo.recordDelivered(abandoned, { startedAt: new Date(), durationMs: 1, statusCode: 200, error: null })
        yield* repo.recordFailed(
          abandoned,
          { startedAt: new Date(), durationMs: 1, statusCode: 500, error: "late" },
          null
        )
        const [delivery] = yield* deliveriesOf(sub.id)
        assert.deepInclude(delivery, { status: "delivered", attempts: 1, last_error: null })
        assert.deepInclude(yield* counters(sub.id), { total_delivered: 1, total_dead_letter: 0 })
      }))
  })
})

// ---------------------------------------------------------------------------
// Order per subscription and exact counters, with several workers at once

/** Runs `workers` worker layers side by side until `done` holds (within `withinMs`), then stops them. */
const runWorkersUntil = <RL, R>(
  workers: ReadonlyArray<Layer.Layer<never, never, RL>>,
  done: Effect.Effect<boolean, never, R>,
  withinMs = 60_000
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    for (const worker of workers) yield* Layer.buildWithScope(worker, scope)
    const deadline = Date.now() + withinMs
    while (!(yield* done)) {
      if (Date.now() > deadline) assert.fail(`the workers did not finish within ${withinMs} ms`)
      yield* Effect.sleep("50 millis")
    }
    yield* Scope.close(scope, Exit.void)
  })

layer(servicesFor(env), serverSuite)("webhook delivery order and counters", (it) => {
  it.effect("one subscription's deliveries reach the receiver in the order they were queued, with two workers at once", () =>
    Effect.gen(function*() {
      const remote = yield* localServer(ok)
      const sub = yield* subscribe({ name: "ordered", url: `${remote.url}/hook` })
      yield* queueEvents(40)
      const queued = (yield* deliveriesOf(sub.id)).map((d) => d.id)
      const worker = WebhookDeliveryWorker.layerWith({ pollInterval: "20 millis", perSubscription: 1, batchSize: 5 })
      yield* runWorkersUntil([worker, worker], Effect.map(counters(sub.id), (c) => c.total_delivered >= 40))
      assert.deepStrictEqual(remote.received.map((r) => r.headers["x-service-delivery"]), queued)
      assert.deepStrictEqual(
        remote.received.map((r) => JSON.parse(r.body).data.n),
        Array.from({ length: 40 }, (_, i) => i)
      )
    }))

  it.effect("a subscription's next deliveries are claimed as soon as the previous ones are recorded, not at the next poll", () =>
    Effect.gen(function*() {
      const remote = yield* localServer(ok)
      const sub = yield* subscribe({ name: "next", url: `${remote.url}/hook` })
      yield* queueEvents(10)
      const queued = (yield* deliveriesOf(sub.id)).map((d) => d.id)
      const worker = WebhookDeliveryWorker.layerWith({ pollInterval: "60 seconds", perSubscription: 2 })
      yield* runWorkersUntil([worker], Effect.map(counters(sub.id), (c) => c.total_delivered >= 10), 10_000)
      const windows = remote.received.map((r) =>
        Math.floor(queued.indexOf(r.headers["x-service-delivery"] as string) / 2)
      )
      assert.deepStrictEqual(windows, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    }))

  it.effect("with the default worker (a claim ahead of the sends, 8 in flight per subscription), each subscription's deliveries arrive in queue order window by window, once each, counted exactly", () =>
    Effect.gen(function*() {
      const remote = yield* localServer(ok)
      const subs: Array<{ readonly id: string }> = []
      for (let i = 0; i < 6; i++) subs.push(yield* subscribe({ name: `many ${i}`, url: `${remote.url}/s${i}` }))
      const events = 50
      yield* queueEvents(events)
      const delivered = Effect.map(
        Effect.all(subs.map((sub) => counters(sub.id))),
        (all) => all.every((c) => c.total_delivered >= events)
      )
      // Two default workers: their claims interleave while others' deliveries are in flight.
      const worker = WebhookDeliveryWorker.layerWith({ pollInterval: "20 millis" })
      yield* runWorkersUntil([worker, worker], delivered)
      for (const [i, sub] of subs.entries()) {
        const queued = (yield* deliveriesOf(sub.id)).map((d) => d.id)
        const arrived = remote.received.filter((r) => r.url === `/s${i}`).map((r) => r.headers["x-service-delivery"])
        // Once each: no delivery sent twice, none lost.
        assert.deepStrictEqual([...arrived].sort(), [...queued].sort())
        // The next 8 are claimed only once the previous 8 are recorded: arrivals keep the queue's windows of 8.
        const windows = arrived.map((id) => Math.floor(queued.indexOf(id as string) / 8))
        assert.deepStrictEqual(windows, [...windows].sort((a, b) => a - b), `subscription ${i}`)
        assert.deepInclude(yield* counters(sub.id), { total_delivered: events, total_dead_letter: 0 })
      }
    }))

  it.effect("a subscription with deliveries in flight is not claimed by another worker, and its oldest are claimed first", () =>
    Effect.gen(function*() {
      const remote = yield* localServer(ok)
      const sub = yield* subscribe({ name: "busy", url: `${remote.url}/hook` })
      yield* queueEvents(5)
      const queued = (yield* deliveriesOf(sub.id)).map((d) => d.id)
      const repo = yield* WebhookDeliveriesRepo
      const first = yield* repo.claimDue({ limit: 10, visibilityTimeoutMs: 60_000, perSubscription: 2 })
      assert.deepStrictEqual(first.map((c) => c.id), queued.slice(0, 2))
      // The rest wait until the first two are recorded: nobody sends delivery 3 before 1 and 2 are done.
      assert.deepStrictEqual(yield* repo.claimDue({ limit: 10, visibilityTimeoutMs: 60_000, perSubscription: 2 }), [])
      yield* repo.recordOutcomes(first.map((claim) => ({
        claim,
        kind: "delivered" as const,
        attempt: { startedAt: new Date(), durationMs: 1, statusCode: 200, error: null },
        nextAttemptAt: null
      })))
      const next = yield* repo.claimDue({ limit: 10, visibilityTimeoutMs: 60_000, perSubscription: 2 })
      assert.deepStrictEqual(next.map((c) => c.id), queued.slice(2, 4))
      yield* repo.release(next[0])
      yield* repo.release(next[1])
      assert.deepInclude(yield* counters(sub.id), { total_delivered: 2, total_dead_letter: 0 })
    }))

  it.effect("a claim takes whole windows, the subscription waiting longest first, so the next claim has others to take", () =>
    Effect.gen(function*() {
      const remote = yield* localServer(ok)
      const first = yield* subscribe({ name: "window a", url: `${remote.url}/a` })
      const second = yield* subscribe({ name: "window b", url: `${remote.url}/b` })
      // Each event queues one delivery per subscription: a1, b1, a2, b2, ...
      yield* queueEvents(4)
      const [a, b] = [
        (yield* deliveriesOf(first.id)).map((d) => d.id),
        (yield* deliveriesOf(second.id)).map((d) => d.id)
      ]
      const repo = yield* WebhookDeliveriesRepo
      const claim = repo.claimDue({ limit: 3, visibilityTimeoutMs: 60_000, perSubscription: 3 })
      const one = yield* claim
      assert.deepStrictEqual(one.map((c) => c.id), a.slice(0, 3))
      const two = yield* claim
      assert.deepStrictEqual(two.map((c) => c.id), b.slice(0, 3))
      for (const claimed of [...one, ...two]) yield* repo.release(claimed)
    }))

  it.effect("counters stay exact when several workers record failures, retries, dead letters and deliveries at once", () =>
    Effect.gen(function*() {
      // Every third attempt fails (500); a delivery dead-letters after WEBHOOK_MAX_ATTEMPTS (3) failures.
      const remote = yield* localServer((_, count) => (count % 3 === 0 ? { status: 500 } : ok()))
      const subs = [
        yield* subscribe({ name: "c1", url: `${remote.url}/a` }),
        yield* subscribe({ name: "c2", url: `${remote.url}/b` }),
        yield* subscribe({ name: "c3", url: `${remote.url}/c` })
      ]
      yield* queueEvents(30)
      const worker = WebhookDeliveryWorker.layerWith({ pollInterval: "20 millis", batchSize: 7, perSubscription: 3 })
      const finished = Effect.map(
        Effect.all(subs.map((sub) => deliveriesOf(sub.id))),
        (all) => all.flat().every((d) => d.status === "delivered" || d.status === "dead_letter")
      )
      yield* runWorkersUntil([worker, worker, worker], finished)
      for (const sub of subs) {
        const rows = yield* deliveriesOf(sub.id)
        assert.strictEqual(rows.length, 30)
        const delivered = rows.filter((d) => d.status === "delivered").length
        const dead = rows.filter((d) => d.status === "dead_letter").length
        assert.deepInclude(yield* counters(sub.id), { total_delivered: delivered, total_dead_letter: dead })
        // Each delivery got exactly one 2xx or was dead-lettered; none was sent by two workers.
        for (const row of rows) {
          const sent = remote.received.filter((r) => r.headers["x-service-delivery"] === row.id).length
          assert.strictEqual(sent, row.attempts, `delivery ${row.id}`)
        }
      }
    }))
})
