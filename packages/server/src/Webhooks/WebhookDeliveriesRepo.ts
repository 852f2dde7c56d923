/**
 * The durable delivery queue of outbound webhooks (`webhook_deliveries`).
 *
 * A delivery is `pending` until its `next_attempt_at`, then claimed by a
 * worker (`delivering`, leased until `locked_until` under a fresh
 * `claim_token`), then `delivered`, back to `pending` for a retry, or
 * `dead_letter`. An outcome is recorded only by the holder of the current
 * claim token, so a worker that lost its lease (it was too slow and another
 * worker took the delivery over) cannot overwrite the newer outcome. Each
 * outcome changes the delivery and its subscription's counters in one
 * statement, so the counters stay exact.
 */
import type { Webhooks } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { Notifications } from "../Platform/Notifications.ts"

export type DeliveryStatus = typeof Webhooks.DeliveryStatus.Type

/** The notification topic a commit with new deliveries publishes: it wakes the delivery workers. */
export const webhookDeliveriesTopic = "webhook_deliveries"

/** The body of every delivery (spec: "Delivery payload"). */
export interface DeliveryPayload {
  readonly id: string
  readonly event: Webhooks.WebhookEvent
  readonly created_at: string
  readonly tenant_id: string
  readonly data: Record<string, unknown>
}

/** A delivery a worker holds, with what it needs to send it. */
export interface ClaimedDelivery {
  readonly id: string
  /** Its place in the queue. */
  readonly seq: string
  readonly claim_token: string
  readonly tenant_id: string
  readonly subscription_id: string
  readonly event: Webhooks.WebhookEvent
  readonly payload: DeliveryPayload
  /** Attempts recorded before this one. */
  readonly attempts: number
  readonly url: string
  /** Encrypted. */
  readonly signing_secret: string | null
}

/** How an attempt ended, as recorded. */
export type OutcomeKind = "delivered" | "gone" | "failed"

/** One attempt's outcome to record: `nextAttemptAt` null for a failure means dead letter. */
export interface Outcome {
  readonly claim: ClaimedDelivery
  readonly kind: OutcomeKind
  readonly attempt: AttemptRecord
  readonly nextAttemptAt: Date | null
}

/** What one attempt observed. */
export interface AttemptRecord {
  readonly startedAt: Date
  readonly durationMs: number
  readonly statusCode: number | null
  readonly error: string | null
}

export interface DeliveryLogRow {
  readonly id: string
  readonly seq: string
  readonly event: Webhooks.WebhookEvent
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly last_duration_ms: number | null
  readonly created_at: Date
  readonly last_attempt_at: Date | null
  readonly next_attempt_at: Date | null
  readonly delivered_at: Date | null
}

export class WebhookDeliveriesRepo extends Context.Service<WebhookDeliveriesRepo, {
  /**
   * Queues the event for every active subscription of the tenant whose filter
   * matches; meant to run in the transaction that records what happened.
   * Returns the number of deliveries queued.
   */
  readonly enqueue: (payload: DeliveryPayload) => Effect.Effect<number, SqlError>
  /**
   * Leases up to `limit` due deliveries (pending and due, or delivering with an
   * expired lease): per subscription its oldest `perSubscription` (default: no
   * bound), of subscriptions with no delivery leased.
   */
  readonly claimDue: (options: {
    readonly limit: number
    readonly visibilityTimeoutMs: number
    readonly perSubscription?: number | undefined
  }) => Effect.Effect<
    ReadonlyArray<ClaimedDelivery>,
    SqlError
  >
  /** Records a batch of outcomes, and their subscriptions' counters, in one statement. */
  readonly recordOutcomes: (outcomes: ReadonlyArray<Outcome>) => Effect.Effect<void, SqlError>
  /** 2xx: delivered, and the subscription's `total_delivered` + 1. */
  readonly recordDelivered: (claim: ClaimedDelivery, attempt: AttemptRecord) => Effect.Effect<void, SqlError>
  /** 410 Gone: dead letter, the subscription disabled and its `total_dead_letter` + 1. */
  readonly recordGone: (claim: ClaimedDelivery, attempt: AttemptRecord) => Effect.Effect<void, SqlError>
  /** Any other failure: pending again at `nextAttemptAt`, or dead letter (and `total_dead_letter` + 1) when null. */
  readonly recordFailed: (
    claim: ClaimedDelivery,
    attempt: AttemptRecord,
    nextAttemptAt: Date | null
  ) => Effect.Effect<void, SqlError>
  /** Gives a lease back untouched (the worker stopped before the attempt finished). */
  readonly release: (claim: ClaimedDelivery) => Effect.Effect<void, SqlError>
  /** A subscription's deliveries, newest first, older than the `before` sequence number. */
  readonly log: (options: {
    readonly tenantId: string
    readonly subscriptionId: string
    readonly limit: number
    readonly before: string | null
  }) => Effect.Effect<ReadonlyArray<DeliveryLogRow>, SqlError>
  readonly findStatus: (options: {
    readonly tenantId: string
    readonly subscriptionId: string
    readonly deliveryId: string
  }) => Effect.Effect<DeliveryStatus | undefined, SqlError>
  /** Schedules a dead-lettered delivery again with a fresh set of attempts; false when it is not dead-lettered (anymore). */
  readonly reschedule: (options: {
    readonly tenantId: string
    readonly subscriptionId: string
    readonly deliveryId: string
  }) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/Webhooks/WebhookDeliveriesRepo") {
  static readonly layer = Layer.effect(
    WebhookDeliveriesRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const notifications = yield* Notifications

      const enqueue = (payload: DeliveryPayload) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ id: string }>`
            INSERT INTO webhook_deliveries (tenant_id, subscription_id, event, payload, next_attempt_at)
            SELECT s.tenant_id, s.id, ${payload.event}, ${JSON.stringify(payload)}::jsonb, now()
            FROM webhook_subscriptions s
            WHERE s.tenant_id = ${payload.tenant_id} AND s.is_active
              AND (s.event_filter = '*' OR s.event_filter = ${payload.event})
            -- A subscription deleted meanwhile is skipped (or waits for this insert), never a foreign key
            -- violation: that would roll back the execution record the deliveries are enqueued with.
            FOR KEY SHARE OF s
            RETURNING id`
          // Sent on COMMIT (pg_notify), so a worker woken by it finds the deliveries.
          if (rows.length > 0) yield* notifications.publish(webhookDeliveriesTopic, payload.tenant_id)
          return rows.length
        })

      const claimDue = (
        options: {
          readonly limit: number
          readonly visibilityTimeoutMs: number
          readonly perSubscription?: number | undefined
        }
      ) =>
        sql<ClaimedDelivery>`
          WITH RECURSIVE open_subscriptions AS (
            -- The subscriptions with open deliveries, one index probe each (a loose index scan).
            (SELECT subscription_id FROM webhook_deliveries WHERE status IN ('pending', 'delivering')
             ORDER BY subscription_id LIMIT 1)
            UNION ALL
            SELECT (SELECT d.subscription_id FROM webhook_deliveries d
                    WHERE d.status IN ('pending', 'delivering') AND d.subscription_id > o.subscription_id
                    ORDER BY d.subscription_id LIMIT 1)
            FROM open_subscriptions o WHERE o.subscription_id IS NOT NULL
          ),
          candidates AS (
            -- Of each active subscription none of whose deliveries is leased, its oldest due ones.
            SELECT c.id, c.seq
            FROM open_subscriptions o
            JOIN webhook_subscriptions s ON s.id = o.subscription_id AND s.is_active
            CROSS JOIN LATERAL (
              SELECT d.id, d.seq FROM webhook_deliveries d
              WHERE d.subscription_id = o.subscription_id AND d.status IN ('pending', 'delivering')
                AND ((d.status = 'pending' AND d.next_attempt_at <= now())
                  OR (d.status = 'delivering' AND d.locked_until <= now()))
              ORDER BY d.seq LIMIT ${options.perSubscription ?? 2_147_483_647}::int
            ) c
            WHERE NOT EXISTS (
              SELECT 1 FROM webhook_deliveries b
              WHERE b.subscription_id = o.subscription_id AND b.status = 'delivering' AND b.locked_until > now()
            )
            -- Whole windows, the subscription waiting longest first: a subscription stays busy until all of its
            -- claimed deliveries are recorded, so a claim of a few of every subscription would leave the next
            -- claim nothing to take while they are sent.
            ORDER BY min(c.seq) OVER (PARTITION BY o.subscription_id), c.seq LIMIT ${options.limit}
          ),
          due AS (
            -- An array of ids: looked up by primary key, never a scan of the whole table (delivered history included).
            SELECT d.id FROM webhook_deliveries d
            WHERE d.id = ANY (ARRAY(SELECT id FROM candidates))
              -- Checked again on the row as locked: a concurrent claim that committed first has made it not due.
              AND ((d.status = 'pending' AND d.next_attempt_at <= now()) OR (d.status = 'delivering' AND d.locked_until <= now()))
            FOR UPDATE SKIP LOCKED
          )
          UPDATE webhook_deliveries d
          SET status = 'delivering',
              locked_until = now() + interval '1 millisecond' * ${options.visibilityTimeoutMs}::int,
              claim_token = gen_random_uuid()
          FROM due, webhook_subscriptions s
          WHERE d.id = due.id AND s.id = d.subscription_id
          RETURNING d.id, d.seq::text AS seq, d.claim_token, d.tenant_id, d.subscription_id, d.event, d.payload, d.attempts,
                    s.url, s.signing_secret`.pipe(
          // RETURNING follows no order: give them back in queue order.
          Effect.map((rows) => [...rows].sort((a, b) => Number(a.seq) - Number(b.seq)))
        )

      const recordOutcomes = (outcomes: ReadonlyArray<Outcome>) => {
        if (outcomes.length === 0) return Effect.void
        const status = (outcome: Outcome) =>
          outcome.kind === "delivered"
            ? "delivered"
            : outcome.kind === "gone" || outcome.nextAttemptAt === null
            ? "dead_letter"
            : "pending"
        return sql`
          WITH outcome AS (
            SELECT * FROM jsonb_to_recordset(${
          JSON.stringify(outcomes.map((o) => ({
            id: o.claim.id,
            claim_token: o.claim.claim_token,
            status: status(o),
            next_attempt_at: o.nextAttemptAt?.toISOString() ?? null,
            started_at: o.attempt.startedAt.toISOString(),
            duration_ms: o.attempt.durationMs,
            status_code: o.attempt.statusCode,
            error: o.attempt.error,
            disables: o.kind === "gone"
          })))
        }::jsonb)
              AS o (id uuid, claim_token uuid, status text, next_attempt_at timestamptz, started_at timestamptz,
                    duration_ms int, status_code int, error text, disables bool)
          ),
          recorded AS (
            UPDATE webhook_deliveries d
            SET status = o.status, attempts = d.attempts + 1,
                next_attempt_at = CASE WHEN o.status = 'pending' THEN o.next_attempt_at END,
                delivered_at = CASE WHEN o.status = 'delivered' THEN now() ELSE d.delivered_at END,
                last_attempt_at = o.started_at, last_duration_ms = o.duration_ms, last_status_code = o.status_code,
                last_error = o.error, locked_until = NULL, claim_token = NULL
            FROM outcome o
            WHERE d.id = o.id AND d.claim_token = o.claim_token
            RETURNING d.subscription_id, o.status, o.disables
          ),
          counts AS (
            SELECT subscription_id,
                   count(*) FILTER (WHERE status = 'delivered') AS delivered,
                   count(*) FILTER (WHERE status = 'dead_letter') AS dead,
                   bool_or(disables) AS disables
            FROM recorded GROUP BY subscription_id
          )
          UPDATE webhook_subscriptions s
          SET total_delivered = s.total_delivered + c.delivered,
              total_dead_letter = s.total_dead_letter + c.dead,
              is_active = s.is_active AND NOT c.disables,
              updated_at = CASE WHEN c.disables THEN now() ELSE s.updated_at END
          FROM counts c WHERE s.id = c.subscription_id`.pipe(Effect.asVoid)
      }

      const recordDelivered = (claim: ClaimedDelivery, attempt: AttemptRecord) =>
        recordOutcomes([{ claim, kind: "delivered", attempt, nextAttemptAt: null }])

      const recordGone = (claim: ClaimedDelivery, attempt: AttemptRecord) =>
        recordOutcomes([{ claim, kind: "gone", attempt, nextAttemptAt: null }])

      const recordFailed = (claim: ClaimedDelivery, attempt: AttemptRecord, nextAttemptAt: Date | null) =>
        recordOutcomes([{ claim, kind: "failed", attempt, nextAttemptAt }])

      const release = (claim: ClaimedDelivery) =>
        sql`
          UPDATE webhook_deliveries SET status = 'pending', locked_until = NULL, claim_token = NULL
          WHERE id = ${claim.id} AND claim_token = ${claim.claim_token}`.pipe(Effect.asVoid)

      const log = (
        options: {
          readonly tenantId: string
          readonly subscriptionId: string
          readonly limit: number
          readonly before: string | null
        }
      ) =>
        sql<DeliveryLogRow>`
          SELECT id, seq::text AS seq, event, status, attempts, last_status_code, last_error, last_duration_ms,
                 created_at, last_attempt_at, next_attempt_at, delivered_at
          FROM webhook_deliveries
          WHERE tenant_id = ${options.tenantId} AND subscription_id = ${options.subscriptionId}
            AND (${options.before}::bigint IS NULL OR seq < ${options.before}::bigint)
          ORDER BY webhook_deliveries.seq DESC -- the column: seq alone would name the text alias above
          LIMIT ${options.limit}`

      const findStatus = (
        options: { readonly tenantId: string; readonly subscriptionId: string; readonly deliveryId: string }
      ) =>
        sql<{ status: DeliveryStatus }>`
          SELECT status FROM webhook_deliveries
          WHERE id = ${options.deliveryId} AND subscription_id = ${options.subscriptionId} AND tenant_id = ${options.tenantId}`
          .pipe(
            Effect.map((rows) => rows[0]?.status)
          )

      const reschedule = (
        options: { readonly tenantId: string; readonly subscriptionId: string; readonly deliveryId: string }
      ) =>
        sql<{ id: string }>`
          UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now()
          WHERE id = ${options.deliveryId} AND subscription_id = ${options.subscriptionId} AND tenant_id = ${options.tenantId}
            AND status = 'dead_letter'
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

      return WebhookDeliveriesRepo.of({
        enqueue,
        claimDue,
        recordOutcomes,
        recordDelivered,
        recordGone,
        recordFailed,
        release,
        log,
        findStatus,
        reschedule
      })
    })
  )
}
