/**
 * The webhook delivery worker of the jobs role. Per cycle (`deliverDue`) it:
 *
 * 1. claims a batch of due deliveries (`FOR UPDATE SKIP LOCKED`, one short
 *    statement) and leases them for the visibility timeout;
 * 2. sends several at once, outside any transaction, each a signed POST of
 *    `{id, event, created_at, tenant_id, data}` through the same guarded
 *    outbound client as actions (no redirects followed);
 * 3. records each outcome as soon as its call returns, uninterruptibly:
 *    2xx delivered; 410 Gone dead-letters it and disables the subscription;
 *    anything else retries after `WEBHOOK_RETRY_BASE_MS * 2^(attempt-1)`
 *    (plus up to 25 % jitter) until `WEBHOOK_MAX_ATTEMPTS`, then dead letter.
 *
 * Delivery is at least once. A worker stopped mid-call gives its leases back;
 * one that dies leaves them to expire, after which another worker claims them
 * again — nothing is lost. Keep the visibility timeout well above
 * `ACTIONS_TIMEOUT_MS`, or a slow call may be sent twice.
 */
import { Clock, Context, Duration, Effect, Exit, Layer, Result, Schedule } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { OutboundHttp } from "../Actions/OutboundHttp.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { Encryption } from "../Platform/Encryption.ts"
import { type AttemptRecord, type ClaimedDelivery, WebhookDeliveriesRepo } from "./WebhookDeliveriesRepo.ts"
import { signatureHeader } from "./WebhookSignature.ts"

export interface DeliveryOptions {
  /** Deliveries claimed per cycle; default 20. */
  readonly batchSize?: number | undefined
  /** Deliveries in flight at once; default 8. */
  readonly concurrency?: number | undefined
  /** How long a claim holds before another worker may take the delivery over; default 60 s. */
  readonly visibilityTimeout?: Duration.Input | undefined
}

/** What one cycle did. */
export interface DeliveryBatch {
  readonly claimed: number
  readonly delivered: number
  readonly retrying: number
  readonly deadLettered: number
  /** Given back unattempted because the worker was stopped. */
  readonly released: number
}

const defaults = { batchSize: 20, concurrency: 8, visibilityTimeout: Duration.seconds(60) }

/** No retry waits longer than this, whatever the configuration. */
const maxBackoffMs = 6 * 60 * 60 * 1000

/** The wait before attempt `n + 1` after `n` failed ones, with up to 25 % jitter so retries of one outage spread out. */
export const retryDelayMs = (baseMs: number, failedAttempts: number): number => {
  const nominal = Math.min(baseMs * 2 ** (failedAttempts - 1), maxBackoffMs)
  return nominal + Math.floor(Math.random() * nominal * 0.25)
}

type Outcome =
  | { readonly kind: "delivered"; readonly attempt: AttemptRecord }
  | { readonly kind: "gone"; readonly attempt: AttemptRecord }
  | { readonly kind: "failed"; readonly attempt: AttemptRecord }

const excerpt = (body: Uint8Array) => new TextDecoder().decode(body.subarray(0, 200))

export class WebhookDelivery extends Context.Service<WebhookDelivery, {
  /** One cycle: claim a batch, deliver it, record every outcome. */
  readonly deliverDue: (options?: DeliveryOptions) => Effect.Effect<DeliveryBatch, SqlError>
}>()("@agent-platform/server/Webhooks/WebhookDelivery") {
  static readonly layer = Layer.effect(
    WebhookDelivery,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const repo = yield* WebhookDeliveriesRepo
      const http = yield* OutboundHttp
      const encryption = yield* Encryption

      /** One signed POST; every way it can end is an Outcome (only interruption escapes). */
      const attempt = (claim: ClaimedDelivery) =>
        Effect.gen(function*() {
          const startedAt = yield* Clock.currentTimeMillis
          const finish = (kind: Outcome["kind"], statusCode: number | null, error: string | null) =>
            Effect.map(Clock.currentTimeMillis, (now): Outcome => ({
              kind,
              attempt: { startedAt: new Date(startedAt), durationMs: Math.max(0, now - startedAt), statusCode, error }
            }))
          const timestamp = Math.floor(startedAt / 1000)
          const { payload } = claim
          const body = JSON.stringify({
            id: payload.id,
            event: payload.event,
            created_at: payload.created_at,
            tenant_id: payload.tenant_id,
            data: payload.data
          })
          const headers: Record<string, string> = {
            "user-agent": "agent-platform-webhooks",
            "x-service-event": claim.event,
            "x-service-delivery": claim.id,
            "x-service-timestamp": String(timestamp)
          }
          if (claim.signing_secret !== null) {
            const secret = yield* Effect.result(encryption.decrypt(claim.signing_secret))
            if (Result.isFailure(secret)) return yield* finish("failed", null, `signing secret: ${secret.failure.message}`)
            headers["x-service-signature"] = signatureHeader(secret.success, timestamp, body)
          }
          const answer = yield* Effect.result(http.send(
            { method: "POST", url: claim.url, headers, body: { contentType: "application/json", text: body } },
            // Receivers' bodies only feed the log's error excerpt: read a little, never fail on size.
            { maxRedirects: 0, responseLimit: { maxBytes: 1024, beyond: "truncate" } }
          ))
          if (Result.isFailure(answer)) return yield* finish("failed", null, answer.failure.message)
          const { status } = answer.success
          if (status >= 200 && status < 300) return yield* finish("delivered", status, null)
          const detail = excerpt(answer.success.body)
          const error = `receiver answered HTTP ${status}${detail.length > 0 ? `: ${detail}` : ""}`
          return yield* finish(status === 410 ? "gone" : "failed", status, error)
        })

      const record = (claim: ClaimedDelivery, outcome: Outcome): Effect.Effect<keyof Omit<DeliveryBatch, "claimed" | "released">, SqlError> => {
        switch (outcome.kind) {
          case "delivered":
            return Effect.as(repo.recordDelivered(claim, outcome.attempt), "delivered")
          case "gone":
            return Effect.as(repo.recordGone(claim, outcome.attempt), "deadLettered")
          case "failed": {
            const failedAttempts = claim.attempts + 1
            if (failedAttempts >= config.webhookMaxAttempts) {
              return Effect.as(repo.recordFailed(claim, outcome.attempt, null), "deadLettered")
            }
            const delay = retryDelayMs(config.webhookRetryBaseMs, failedAttempts)
            const next = new Date(outcome.attempt.startedAt.getTime() + outcome.attempt.durationMs + delay)
            return Effect.as(repo.recordFailed(claim, outcome.attempt, next), "retrying")
          }
        }
      }

      /**
       * The call may be interrupted; what follows it may not: an outcome is
       * recorded once the call returned, or the lease is given back when the
       * call was cut short.
       */
      const deliverOne = (claim: ClaimedDelivery) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const exit = yield* Effect.exit(restore(attempt(claim)))
            if (Exit.isFailure(exit)) {
              yield* repo.release(claim)
              return "released" as const
            }
            return yield* record(claim, exit.value)
          })
        ).pipe(
          // A database failure here leaves the lease to expire: the delivery is retried, not lost.
          Effect.catchCause((cause) =>
            Effect.as(Effect.logWarning(`webhook delivery ${claim.id}: could not record the attempt`, cause), "released" as const)
          )
        )

      const deliverDue = (options: DeliveryOptions = {}) =>
        Effect.gen(function*() {
          const claims = yield* repo.claimDue({
            limit: options.batchSize ?? defaults.batchSize,
            visibilityTimeoutMs: Duration.toMillis(options.visibilityTimeout ?? defaults.visibilityTimeout)
          })
          const results = yield* Effect.forEach(claims, deliverOne, { concurrency: options.concurrency ?? defaults.concurrency })
          const count = (kind: string) => results.filter((result) => result === kind).length
          return {
            claimed: claims.length,
            delivered: count("delivered"),
            retrying: count("retrying"),
            deadLettered: count("deadLettered"),
            released: count("released")
          } satisfies DeliveryBatch
        })

      return WebhookDelivery.of({ deliverDue })
    })
  ).pipe(Layer.provide(Layer.mergeAll(WebhookDeliveriesRepo.layer, OutboundHttp.layer)))
}

export interface WorkerOptions extends DeliveryOptions {
  /** The pause between cycles once the queue is drained; default 1 s. */
  readonly pollInterval?: Duration.Input | undefined
}

const workerLayer = (options: WorkerOptions = {}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const delivery = yield* WebhookDelivery
    const batchSize = options.batchSize ?? defaults.batchSize
    // A full batch means more is due: go on at once rather than after the poll interval.
    const drain = delivery.deliverDue(options).pipe(Effect.repeat({ while: (batch) => batch.claimed >= batchSize }))
    yield* drain.pipe(
      Effect.catchCause((cause) => Effect.logWarning("webhook delivery cycle failed; the next poll tries again", cause)),
      Effect.repeat(Schedule.spaced(options.pollInterval ?? "1 second")),
      Effect.forkScoped
    )
  })).pipe(Layer.provide(WebhookDelivery.layer))

/**
 * Runs `deliverDue` in a loop for the jobs role, until its scope closes
 * (in-flight calls are then cut short and their leases given back; recorded
 * outcomes are never lost).
 */
export const WebhookDeliveryWorker = {
  layer: workerLayer(),
  layerWith: workerLayer
} as const
