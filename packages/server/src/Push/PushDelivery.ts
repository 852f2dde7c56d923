/**
 * The Web Push delivery worker of the jobs role. Per cycle (`deliverDue`) it
 * leases due messages, and for each one encrypts the payload for the
 * subscription (aes128gcm, RFC 8291) and signs a VAPID JWT (RFC 8292) with
 * web-push, then POSTs it to the push service through the guarded outbound
 * client (no redirects). 2xx: delivered. 404 or 410: the subscription is gone
 * and is deleted. 429, 5xx and network failures: retried after
 * `PUSH_RETRY_BASE_MS * 2^(attempt-1)` up to `PUSH_MAX_ATTEMPTS`. Any other
 * 4xx: failed (a retry would be refused again).
 *
 * It runs a cycle when a push is queued on any replica (LISTEN/NOTIFY) and at
 * least every few seconds, so retries and missed notifications are picked up.
 *
 * Delivery is at least once. Each claim leases a delivery under its own token
 * and only that claim's outcome is recorded (PushDeliveriesRepo), so a worker
 * that outlived its lease cannot overwrite the outcome of the worker that took
 * the delivery over — but both may have sent it. A worker stopped before the
 * POST gives the lease back with the attempt uncounted; one stopped during the
 * POST cannot know whether the push service took the message, so it gives the
 * lease back with the attempt counted and the push is sent again (a
 * notification shown twice beats an invitation never shown; the attempt limit
 * still ends a delivery that keeps being cut short). Every copy carries the
 * delivery id as its `Topic` (RFC 8030 §5.4): a copy still waiting at the push
 * service for the browser is replaced by the next one, not shown twice.
 */
import { Config, Context, Effect, Layer, Queue, Redacted, Result, Schema, Stream } from "effect"
import webpush from "web-push"
import { OutboundHttp } from "../Actions/OutboundHttp.ts"
import { Notifications } from "../Platform/Notifications.ts"
import { type ClaimedPush, PushDeliveriesRepo } from "./PushDeliveriesRepo.ts"
import { pushTopic } from "./PushQueue.ts"
import { PushSubscriptionsRepo } from "./PushSubscriptionsRepo.ts"
import { VapidKeys } from "./VapidKeys.ts"

const PositiveInt = Schema.FiniteFromString.check(Schema.isInt(), Schema.isGreaterThan(0))

export const pushConfig = Config.all({
  retryBaseMs: Config.schema(PositiveInt, "PUSH_RETRY_BASE_MS").pipe(Config.withDefault(30_000)),
  maxAttempts: Config.schema(PositiveInt, "PUSH_MAX_ATTEMPTS").pipe(Config.withDefault(6))
})

const batchSize = 20
const concurrency = 8
const leaseSeconds = 60
/** A push that cannot be delivered within a day is not worth showing. */
const ttlSeconds = 24 * 60 * 60
const maxBackoffMs = 60 * 60 * 1000

export type PushOutcome = "delivered" | "gone" | "retrying" | "failed"

export class PushDelivery extends Context.Service<PushDelivery, {
  /** Sends what is due, until nothing is; the outcome of each attempt. */
  readonly deliverDue: Effect.Effect<ReadonlyArray<PushOutcome>>
}>()("@agent-platform/server/Push/PushDelivery") {
  static readonly layer = Layer.effect(
    PushDelivery,
    Effect.gen(function*() {
      const config = yield* pushConfig
      const deliveries = yield* PushDeliveriesRepo
      const subscriptions = yield* PushSubscriptionsRepo
      const vapid = yield* VapidKeys
      const http = yield* OutboundHttp

      const retryOrFail = (claimed: ClaimedPush, statusCode: number | null, error: string) =>
        claimed.attempts >= config.maxAttempts
          ? Effect.as(
            deliveries.finish(claimed, "failed", statusCode, `${error} (after ${claimed.attempts} attempts)`),
            "failed" as const
          )
          : Effect.as(
            deliveries.retryLater(
              claimed,
              Math.min(config.retryBaseMs * 2 ** (claimed.attempts - 1), maxBackoffMs),
              statusCode,
              error
            ),
            "retrying" as const
          )

      const sendOne = (claimed: ClaimedPush) => {
        /** Whether the POST has started: from then on the push service may have the message. */
        let posted = false
        return Effect.gen(function*() {
          const subscription = claimed.subscription_id === null
            ? undefined
            : yield* subscriptions.find(claimed.subscription_id)
          if (subscription === undefined) {
            return yield* Effect.as(
              deliveries.finish(claimed, "gone", null, "the subscription was deleted"),
              "gone" as const
            )
          }
          const keys = yield* Effect.result(vapid.get)
          if (Result.isFailure(keys)) return yield* retryOrFail(claimed, null, keys.failure.message)
          const details = webpush.generateRequestDetails(
            { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
            JSON.stringify(claimed.payload),
            {
              vapidDetails: {
                subject: keys.success.subject,
                publicKey: keys.success.publicKey,
                privateKey: Redacted.value(keys.success.privateKey)
              },
              TTL: ttlSeconds,
              // A resent copy replaces one the push service still holds (a UUID's 32 hex digits are a valid topic).
              topic: claimed.id.replace(/-/gu, ""),
              contentEncoding: "aes128gcm",
              urgency: "high"
            }
          )
          // The body sets its own type and length.
          const headers = Object.fromEntries(
            Object.entries(details.headers)
              .filter(([name]) => !["content-length", "content-type"].includes(name.toLowerCase()))
              .map(([name, value]) => [name, String(value)])
          )
          posted = true
          const answer = yield* Effect.result(http.send(
            {
              method: "POST",
              url: details.endpoint,
              headers,
              body: { contentType: "application/octet-stream", bytes: new Uint8Array(details.body) }
            },
            {
              tenantId: subscription.tenant_id,
              maxRedirects: 0,
              responseLimit: { maxBytes: 4096, beyond: "truncate" }
            }
          ))
          if (Result.isFailure(answer)) return yield* retryOrFail(claimed, null, answer.failure.message)
          const status = answer.success.status
          if (status >= 200 && status < 300) {
            return yield* Effect.as(deliveries.delivered(claimed, status), "delivered" as const)
          }
          if (status === 404 || status === 410) {
            yield* subscriptions.forget(subscription.id)
            return yield* Effect.as(
              deliveries.finish(
                claimed,
                "gone",
                status,
                `the push service answered ${status}: subscription deleted`
              ),
              "gone" as const
            )
          }
          if (status === 429 || status >= 500) {
            return yield* retryOrFail(claimed, status, `the push service answered ${status}`)
          }
          return yield* Effect.as(
            deliveries.finish(claimed, "failed", status, `the push service refused it with ${status}`),
            "failed" as const
          )
        }).pipe(
          Effect.orDie,
          // A worker stopped mid-delivery gives the lease back: sent again at once, the attempt counted once posted.
          Effect.onInterrupt(() => Effect.ignore(deliveries.release(claimed, { attempted: posted })))
        )
      }

      const deliverDue = Effect.gen(function*() {
        const outcomes: Array<PushOutcome> = []
        for (;;) {
          const claimed = yield* Effect.orDie(deliveries.claim(batchSize, leaseSeconds))
          if (claimed.length === 0) return outcomes
          outcomes.push(...(yield* Effect.forEach(claimed, sendOne, { concurrency })))
          if (claimed.length < batchSize) return outcomes
        }
      })

      return PushDelivery.of({ deliverDue })
    })
  )

  /** The worker fiber: a cycle when woken by a queued push, else every `min(5 s, PUSH_RETRY_BASE_MS)`. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const delivery = yield* PushDelivery
    const notifications = yield* Notifications
    const config = yield* pushConfig
    const wake = yield* Queue.sliding<void>(1)
    yield* Stream.runForEach(notifications.subscribe(pushTopic), () => Queue.offer(wake, undefined)).pipe(
      Effect.forkScoped
    )
    const idle = Math.min(5_000, config.retryBaseMs)
    yield* Effect.gen(function*() {
      for (;;) {
        yield* delivery.deliverDue.pipe(
          Effect.catchCause((cause) => Effect.logWarning("push delivery cycle failed", cause))
        )
        yield* Queue.take(wake).pipe(Effect.timeout(`${idle} millis`), Effect.ignore)
      }
    }).pipe(Effect.forkScoped)
  }))
}
