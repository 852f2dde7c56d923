/**
 * The webhook delivery worker of the jobs role. A cycle (`deliverDue`, one
 * batch from claim to outcomes) and the worker's loop (`deliverContinuously`,
 * claims overlapping the sends) do the same three things:
 *
 * 1. claim a batch of due deliveries (`FOR UPDATE SKIP LOCKED`, one short
 *    statement) and lease them for the visibility timeout: per subscription
 *    its oldest few (`perSubscription`), and none of a subscription whose
 *    deliveries are still being sent (by this worker or another), so one
 *    subscription's deliveries are attempted in the order they were queued;
 * 2. send many at once (`concurrency`), in queue order, outside any
 *    transaction, each a signed POST of `{id, event, created_at, tenant_id,
 *    data}` through the same guarded outbound client as actions (no redirects
 *    followed, connections kept alive per host);
 * 3. record the outcomes in batches — whatever has returned while the
 *    previous batch was being written, one statement for all of them and
 *    their subscriptions' counters — uninterruptibly: 2xx delivered; 410 Gone
 *    dead-letters it and disables the subscription; anything else retries
 *    after `WEBHOOK_RETRY_BASE_MS * 2^(attempt-1)` (plus up to 25 % jitter)
 *    until `WEBHOOK_MAX_ATTEMPTS`, then dead letter.
 *
 * The worker keeps its sends going: it claims the next batch while the
 * current one is in flight (up to `concurrency` sending and a batch waiting
 * its turn), and looks for more as soon as outcomes are recorded (their
 * subscriptions may be claimed again) or a commit queues deliveries (LISTEN/
 * NOTIFY through `Notifications`); only with nothing due does it wait, up to
 * `pollInterval`, for retries to come due. One slow receiver holds up only
 * its own sends. Delivery is at least once. A worker stopped mid-call gives
 * its leases back; one that dies leaves them to expire, after which another
 * worker claims them again — nothing is lost. Keep the visibility timeout
 * well above `ACTIONS_TIMEOUT_MS`, or a slow call may be sent twice.
 */
import { Context, Duration, Effect, Exit, Fiber, FiberSet, Layer, Queue, Result, Semaphore, Stream } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { OutboundHttp } from "../Actions/OutboundHttp.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { Notifications } from "../Platform/Notifications.ts"
import {
  type AttemptRecord,
  type ClaimedDelivery,
  type Outcome,
  type OutcomeKind,
  WebhookDeliveriesRepo,
  webhookDeliveriesTopic
} from "./WebhookDeliveriesRepo.ts"
import { deliveryHeaders, type SigningKey, signingKey } from "./WebhookSignature.ts"
import { WebhookSubscriptions } from "./WebhookSubscriptions.ts"

export interface DeliveryOptions {
  /** Deliveries claimed per cycle; default 200. */
  readonly batchSize?: number | undefined
  /** Deliveries in flight at once in a cycle; default 64. */
  readonly concurrency?: number | undefined
  /** Deliveries of one subscription claimed (so in flight) at once; default 8. */
  readonly perSubscription?: number | undefined
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

const defaults = {
  batchSize: 200,
  concurrency: 64,
  perSubscription: 8,
  visibilityTimeout: Duration.seconds(60),
  workerConcurrency: 256,
  pollInterval: Duration.seconds(1)
}

/** No retry waits longer than this, whatever the configuration. */
const maxBackoffMs = 6 * 60 * 60 * 1000

/** The wait before attempt `n + 1` after `n` failed ones, with up to 25 % jitter so retries of one outage spread out. */
export const retryDelayMs = (baseMs: number, failedAttempts: number): number => {
  const nominal = Math.min(baseMs * 2 ** (failedAttempts - 1), maxBackoffMs)
  return nominal + Math.floor(Math.random() * nominal * 0.25)
}

type Attempted = { readonly kind: OutcomeKind; readonly attempt: AttemptRecord }

const excerpt = (body: Uint8Array) => new TextDecoder().decode(body.subarray(0, 200))

export class WebhookDelivery extends Context.Service<WebhookDelivery, {
  /** One cycle: claim a batch, deliver it, record every outcome. */
  readonly deliverDue: (options?: DeliveryOptions) => Effect.Effect<DeliveryBatch, SqlError>
  /**
   * The worker's loop, until interrupted: keeps up to `concurrency` deliveries
   * in flight, claiming the next batch while the current ones are sent, and
   * looks again whenever outcomes are recorded (their subscriptions may be
   * claimed again), `wakeups` emits (new deliveries were queued), or
   * `pollInterval` passes with nothing due (retries that came due).
   */
  readonly deliverContinuously: (options: WorkerOptions, wakeups: Stream.Stream<unknown>) => Effect.Effect<never>
}>()("@agent-platform/server/Webhooks/WebhookDelivery") {
  static readonly layer = Layer.effect(
    WebhookDelivery,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const repo = yield* WebhookDeliveriesRepo
      const http = yield* OutboundHttp
      const subscriptions = yield* WebhookSubscriptions

      /** One signed POST with the keys of the subscription's secrets; every way it can end is an Outcome (only interruption escapes). */
      const attempt = (claim: ClaimedDelivery, keys: Result.Result<ReadonlyArray<SigningKey>, string>) =>
        Effect.suspend(() => {
          const startedAt = Date.now()
          const finish = (kind: OutcomeKind, statusCode: number | null, error: string | null): Attempted => ({
            kind,
            attempt: {
              startedAt: new Date(startedAt),
              durationMs: Math.max(0, Date.now() - startedAt),
              statusCode,
              error
            }
          })
          if (Result.isFailure(keys)) return Effect.succeed(finish("failed", null, keys.failure))
          const { payload } = claim
          const body = JSON.stringify({
            id: payload.id,
            event: payload.event,
            created_at: payload.created_at,
            tenant_id: payload.tenant_id,
            data: payload.data
          })
          const headers = deliveryHeaders({
            id: claim.id,
            event: claim.event,
            timestamp: Math.floor(startedAt / 1000),
            body,
            keys: keys.success
          })
          return http.send(
            { method: "POST", url: claim.url, headers, body: { contentType: "application/json", text: body } },
            // Receivers' bodies only feed the log's error excerpt: read a little, never fail on size.
            { tenantId: payload.tenant_id, maxRedirects: 0, responseLimit: { maxBytes: 1024, beyond: "truncate" } }
          ).pipe(
            Effect.match({
              onFailure: (failure) => finish("failed", null, failure.message),
              onSuccess: ({ body, status }) => {
                if (status >= 200 && status < 300) return finish("delivered", status, null)
                const detail = excerpt(body)
                const error = `receiver answered HTTP ${status}${detail.length > 0 ? `: ${detail}` : ""}`
                return finish(status === 410 ? "gone" : "failed", status, error)
              }
            })
          )
        })

      /**
       * Each subscription's signing keys, its secrets decrypted once per batch
       * of claims (a failure is recorded on its deliveries).
       */
      const keysOf = (claims: ReadonlyArray<ClaimedDelivery>) =>
        Effect.gen(function*() {
          const keys = new Map<string, Result.Result<ReadonlyArray<SigningKey>, string>>()
          for (const claim of claims) {
            if (keys.has(claim.subscription_id)) continue
            const resolved = yield* Effect.result(subscriptions.signingSecrets(claim))
            keys.set(
              claim.subscription_id,
              Result.isFailure(resolved)
                ? Result.fail(`signing secret: ${resolved.failure.message}`)
                : Result.succeed(resolved.success.map(signingKey))
            )
          }
          return keys
        })

      /** The outcome to record for an attempt: when a failure is retried, or that it is dead-lettered. */
      const toOutcome = (claim: ClaimedDelivery, attempted: Attempted): Outcome => {
        if (attempted.kind !== "failed") return { claim, ...attempted, nextAttemptAt: null }
        const failedAttempts = claim.attempts + 1
        if (failedAttempts >= config.webhookMaxAttempts) return { claim, ...attempted, nextAttemptAt: null }
        const delay = retryDelayMs(config.webhookRetryBaseMs, failedAttempts)
        return {
          claim,
          ...attempted,
          nextAttemptAt: new Date(attempted.attempt.startedAt.getTime() + attempted.attempt.durationMs + delay)
        }
      }

      const countAs = (outcome: Outcome): "delivered" | "retrying" | "deadLettered" =>
        outcome.kind === "delivered"
          ? "delivered"
          : outcome.kind === "failed" && outcome.nextAttemptAt !== null
          ? "retrying"
          : "deadLettered"

      /** Gives a lease back untouched; a failure leaves it to expire (retried later, not lost). */
      const release = (claim: ClaimedDelivery) =>
        repo.release(claim).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning(`webhook delivery ${claim.id}: could not give the lease back`, cause)
          )
        )

      // The claim is not interruptible: a claim that committed is always sent or given back, never left leased
      // by a worker that is stopping.
      const deliverDue = (options: DeliveryOptions = {}) =>
        Effect.uninterruptibleMask((restoreCycle) =>
          Effect.gen(function*() {
            const claims = yield* repo.claimDue({
              limit: options.batchSize ?? defaults.batchSize,
              visibilityTimeoutMs: Duration.toMillis(options.visibilityTimeout ?? defaults.visibilityTimeout),
              perSubscription: options.perSubscription ?? defaults.perSubscription
            })
            const counts = { claimed: claims.length, delivered: 0, retrying: 0, deadLettered: 0, released: 0 }
            if (claims.length === 0) return counts satisfies DeliveryBatch
            const keys = yield* keysOf(claims)
            const returned = yield* Queue.unbounded<Outcome>()

            /** Writes a batch of outcomes; a database failure leaves their leases to expire: retried, not lost. */
            const write = (outcomes: ReadonlyArray<Outcome>) =>
              repo.recordOutcomes(outcomes).pipe(
                Effect.tap(() =>
                  Effect.sync(() => {
                    for (const outcome of outcomes) counts[countAs(outcome)]++
                  })
                ),
                Effect.catchCause((cause) =>
                  Effect.logWarning(
                    `could not record ${outcomes.length} webhook delivery attempt(s); their leases will expire and they are retried`,
                    cause
                  ).pipe(
                    Effect.tap(() => Effect.sync(() => (counts.released += outcomes.length)))
                  )
                )
              )
            // Waits (interruptibly) for one outcome, then writes it with everything else that has returned meanwhile.
            const recordReturned = Effect.gen(function*() {
              const first = yield* Queue.take(returned)
              yield* Effect.uninterruptible(Effect.flatMap(Queue.clear(returned), (rest) => write([first, ...rest])))
            }).pipe(Effect.forever)

            /**
             * The call may be interrupted; what follows it may not: its outcome
             * is queued for recording once the call returned, or the lease is
             * given back when the call was cut short.
             */
            /** Claims whose attempt has begun; the others are given back if the cycle is stopped first. */
            const started = new Set<string>()
            const deliverOne = (claim: ClaimedDelivery) =>
              Effect.uninterruptibleMask((restore) =>
                Effect.gen(function*() {
                  started.add(claim.id)
                  const exit = yield* Effect.exit(restore(attempt(claim, keys.get(claim.subscription_id)!)))
                  if (Exit.isSuccess(exit)) return yield* Queue.offer(returned, toOutcome(claim, exit.value))
                  counts.released++
                  yield* release(claim)
                })
              )

            // Interruptible inside, whatever the fiber it is forked from.
            const recorder = yield* Effect.forkChild(restoreCycle(recordReturned))
            yield* restoreCycle(Effect.forEach(claims, deliverOne, {
              concurrency: options.concurrency ?? defaults.concurrency,
              discard: true
            })).pipe(
              // However the sends end, every outcome that returned is written before the cycle does, and every
              // claim not attempted is given back.
              Effect.onExit(() =>
                Fiber.interrupt(recorder).pipe(
                  Effect.andThen(Queue.clear(returned)),
                  Effect.flatMap((rest) => (rest.length === 0 ? Effect.void : write(rest))),
                  Effect.andThen(Effect.suspend(() => {
                    const unstarted = claims.filter((claim) => !started.has(claim.id))
                    counts.released += unstarted.length
                    return Effect.forEach(unstarted, release, { discard: true })
                  }))
                )
              )
            )
            return counts satisfies DeliveryBatch
          })
        )

      /** Writes outcomes; a database failure leaves their leases to expire: retried, not lost. */
      const recordOrExpire = (outcomes: ReadonlyArray<Outcome>) =>
        repo.recordOutcomes(outcomes).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning(
              `could not record ${outcomes.length} webhook delivery attempt(s); their leases will expire and they are retried`,
              cause
            )
          )
        )

      const deliverContinuously = (options: WorkerOptions, wakeups: Stream.Stream<unknown>) =>
        Effect.scoped(Effect.gen(function*() {
          const batchSize = options.batchSize ?? defaults.batchSize
          const concurrency = options.concurrency ?? defaults.workerConcurrency
          const pollInterval = options.pollInterval ?? defaults.pollInterval
          const claimOptions = {
            limit: batchSize,
            visibilityTimeoutMs: Duration.toMillis(options.visibilityTimeout ?? defaults.visibilityTimeout),
            perSubscription: options.perSubscription ?? defaults.perSubscription
          }
          const sending = yield* Semaphore.make(concurrency)
          const returned = yield* Queue.unbounded<Outcome>()
          // Something may have become claimable: outcomes recorded, deliveries queued.
          const wake = yield* Queue.sliding<void>(1)
          /** Claimed, and neither recorded nor given back yet. */
          let held = 0
          const settled = (count: number) =>
            Effect.suspend(() => {
              held -= count
              return Queue.offer(wake, undefined)
            })
          const record = (outcomes: ReadonlyArray<Outcome>) =>
            Effect.andThen(recordOrExpire(outcomes), settled(outcomes.length))

          // Scope finalizers run last to first: the deliveries end first (each outcome queued, or its lease
          // given back), then the recorder, then what it had not taken yet is written.
          yield* Effect.addFinalizer(() =>
            Effect.flatMap(Queue.clear(returned), (rest) => (rest.length === 0 ? Effect.void : record(rest)))
          )
          // One writer: whatever returned while the previous batch was written goes in the next statement.
          yield* Effect.uninterruptibleMask((restore) => Effect.flatMap(restore(Queue.takeAll(returned)), record)).pipe(
            Effect.forever,
            Effect.interruptible,
            Effect.forkScoped
          )
          const deliveries = yield* FiberSet.make<void>()
          yield* Stream.runForEach(wakeups, () => Queue.offer(wake, undefined)).pipe(Effect.forkScoped)

          /** Waits for its turn to send; cut short (the worker stops), its lease is given back. */
          const deliverOne = (claim: ClaimedDelivery, keys: Result.Result<ReadonlyArray<SigningKey>, string>) =>
            Effect.uninterruptibleMask((restore) =>
              Effect.flatMap(
                Effect.exit(restore(sending.withPermits(1)(attempt(claim, keys)))),
                (exit) =>
                  Exit.isSuccess(exit)
                    ? Queue.offer(returned, toOutcome(claim, exit.value))
                    : Effect.andThen(release(claim), settled(1))
              )
            ).pipe(Effect.interruptible)

          // Not interruptible: a claim that committed is always handed to its deliveries.
          const claimNext = Effect.uninterruptible(Effect.gen(function*() {
            const claims = yield* repo.claimDue(claimOptions)
            if (claims.length === 0) return 0
            const keys = yield* keysOf(claims)
            // Counted once their deliveries start: a claim that never got that far leaves no count behind (its
            // leases expire and it is claimed again), which would otherwise hold the worker back for good.
            held += claims.length
            for (const claim of claims) {
              yield* FiberSet.run(deliveries, deliverOne(claim, keys.get(claim.subscription_id)!))
            }
            return claims.length
          }))
          const nextWake = Queue.take(wake).pipe(Effect.timeout(pollInterval), Effect.ignore)

          return yield* Effect.forever(Effect.gen(function*() {
            // Room for a whole batch beyond what is sent now: the next batch waits claimed, not the sender idle.
            if (held > concurrency) return yield* Queue.take(wake)
            const claimed = yield* claimNext.pipe(
              Effect.catchCause((cause) =>
                Effect.logWarning("webhook delivery claim failed; trying again", cause).pipe(Effect.as(0))
              )
            )
            if (claimed === 0) yield* nextWake
          }))
        }))

      return WebhookDelivery.of({ deliverDue, deliverContinuously })
    })
  ).pipe(Layer.provide(Layer.mergeAll(WebhookDeliveriesRepo.layer, OutboundHttp.layer)))
}

export interface WorkerOptions extends DeliveryOptions {
  /** Deliveries in flight at once; default 256. */
  readonly concurrency?: number | undefined
  /** How long the worker waits, when nothing is due and nothing wakes it, before looking again; default 1 s. */
  readonly pollInterval?: Duration.Input | undefined
}

const workerLayer = (options: WorkerOptions = {}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const delivery = yield* WebhookDelivery
    const notifications = yield* Notifications
    yield* Effect.forkScoped(delivery.deliverContinuously(options, notifications.subscribe(webhookDeliveriesTopic)))
  })).pipe(Layer.provide(WebhookDelivery.layer))

/**
 * Runs `deliverContinuously` for the jobs role, until its scope closes
 * (in-flight calls are then cut short and their leases given back; recorded
 * outcomes are never lost).
 */
export const WebhookDeliveryWorker = {
  layer: workerLayer(),
  layerWith: workerLayer
} as const
