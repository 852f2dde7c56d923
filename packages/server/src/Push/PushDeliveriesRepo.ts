/**
 * The push_deliveries table: the durable queue of Web Push messages, one row
 * per subscription and message, claimed by the jobs worker with a lease.
 *
 * A claim leases a delivery (`sending` until `locked_until`) under a fresh
 * `claim_token`, as webhook deliveries are. An outcome, or the lease given
 * back, is written only by the holder of the current token: a worker whose
 * lease expired (another worker took the delivery over) changes nothing.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** A delivery a worker holds. */
export interface ClaimedPush {
  readonly id: string
  readonly claim_token: string
  readonly subscription_id: string | null
  readonly payload: unknown
  /** Attempts counted so far, this one included. */
  readonly attempts: number
}

export class PushDeliveriesRepo extends Context.Service<PushDeliveriesRepo, {
  /** Queues `payload` for each of the user's subscriptions; the number queued. */
  readonly enqueueForUser: (input: {
    readonly tenantId: string
    readonly userId: string
    readonly notificationId: string | null
    readonly payload: unknown
  }) => Effect.Effect<number, SqlError>
  /** Leases up to `limit` due deliveries (pending and due, or sending with an expired lease), counting the attempt. */
  readonly claim: (limit: number, leaseSeconds: number) => Effect.Effect<ReadonlyArray<ClaimedPush>, SqlError>
  /** 2xx: delivered (a no-op unless `claim` still holds the lease, as for every outcome below). */
  readonly delivered: (claim: ClaimedPush, statusCode: number) => Effect.Effect<void, SqlError>
  /** Back to pending after `delayMs`. */
  readonly retryLater: (
    claim: ClaimedPush,
    delayMs: number,
    statusCode: number | null,
    error: string
  ) => Effect.Effect<void, SqlError>
  /** Finished without delivery: `gone` (the subscription was deleted) or `failed` (out of attempts). */
  readonly finish: (
    claim: ClaimedPush,
    status: "gone" | "failed",
    statusCode: number | null,
    error: string
  ) => Effect.Effect<void, SqlError>
  /**
   * Gives a lease back (the worker is stopping): due again at once. `attempted`
   * false: the push was not sent, so the attempt is not counted; true: it may
   * have been sent (the call was cut short), so the attempt counts.
   */
  readonly release: (claim: ClaimedPush, options: { readonly attempted: boolean }) => Effect.Effect<void, SqlError>
  readonly statusOf: (
    id: string
  ) => Effect.Effect<{ readonly status: string; readonly attempts: number } | undefined, SqlError>
}>()("@agent-platform/server/Push/PushDeliveriesRepo") {
  static readonly layer = Layer.effect(
    PushDeliveriesRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      /** The row, while `claim` still holds its lease (its token is the current one). */
      const held = (claim: ClaimedPush) =>
        sql`id = ${claim.id} AND status = 'sending' AND claim_token = ${claim.claim_token}`
      return PushDeliveriesRepo.of({
        enqueueForUser: (input) =>
          Effect.map(
            sql`
              INSERT INTO push_deliveries (tenant_id, subscription_id, notification_id, payload)
              SELECT ${input.tenantId}, s.id, ${input.notificationId}, ${JSON.stringify(input.payload)}::jsonb
              FROM push_subscriptions s WHERE s.tenant_id = ${input.tenantId} AND s.user_id = ${input.userId}
              RETURNING id`,
            (rows) => rows.length
          ),
        claim: (limit, leaseSeconds) =>
          sql<ClaimedPush>`
            UPDATE push_deliveries d
            SET status = 'sending', attempts = d.attempts + 1, locked_until = now() + make_interval(secs => ${leaseSeconds}),
              claim_token = gen_random_uuid()
            FROM (
              SELECT id FROM push_deliveries
              WHERE (status = 'pending' AND next_attempt_at <= now()) OR (status = 'sending' AND locked_until < now())
              ORDER BY next_attempt_at LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ) due
            WHERE d.id = due.id
            RETURNING d.id, d.claim_token, d.subscription_id, d.payload, d.attempts`,
        delivered: (claim, statusCode) =>
          Effect.asVoid(sql`
            UPDATE push_deliveries SET status = 'delivered', last_status_code = ${statusCode}, last_error = NULL,
              locked_until = NULL, claim_token = NULL, finished_at = now()
            WHERE ${held(claim)}`),
        retryLater: (claim, delayMs, statusCode, error) =>
          Effect.asVoid(sql`
            UPDATE push_deliveries SET status = 'pending', last_status_code = ${statusCode}, last_error = ${error},
              locked_until = NULL, claim_token = NULL, next_attempt_at = now() + make_interval(secs => ${
            delayMs / 1000
          })
            WHERE ${held(claim)}`),
        finish: (claim, status, statusCode, error) =>
          Effect.asVoid(sql`
            UPDATE push_deliveries SET status = ${status}, last_status_code = ${statusCode}, last_error = ${error},
              locked_until = NULL, claim_token = NULL, finished_at = now()
            WHERE ${held(claim)}`),
        release: (claim, { attempted }) =>
          Effect.asVoid(sql`
            UPDATE push_deliveries
            SET status = 'pending', attempts = ${attempted ? sql`attempts` : sql`GREATEST(attempts - 1, 0)`},
              locked_until = NULL, claim_token = NULL, next_attempt_at = now()
            WHERE ${held(claim)}`),
        statusOf: (id) =>
          Effect.map(
            sql<{ status: string; attempts: number }>`SELECT status, attempts FROM push_deliveries WHERE id = ${id}`,
            (rows) => rows[0]
          )
      })
    })
  )
}
