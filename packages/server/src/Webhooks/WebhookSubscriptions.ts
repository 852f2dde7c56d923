/**
 * Outbound webhook subscriptions (spec: `/api/webhook-subs`, admin): create,
 * list, update, delete, read the delivery log, and retry a dead-lettered
 * delivery. Every change is appended to the tenant's `admin_audit_log` chain
 * in the transaction that makes it.
 *
 * A subscription's URL must be https — http and internal addresses only where
 * `ACTIONS_ALLOW_PRIVATE_NETWORKS` allows them — and passes the same SSRF
 * guard as every delivery, which checks it again when it sends.
 */
import { Errors, Webhooks } from "@agent-platform/domain"
import { Cache, Clock, Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { randomBytes } from "node:crypto"
import { namesHost, OutboundGuard } from "../Actions/OutboundGuard.ts"
import { AuditLog } from "../Audit/AuditLog.ts"
import { type DecryptionFailed, Encryption } from "../Platform/Encryption.ts"
import { isUuid } from "../Platform/Ids.ts"
import { type ClaimedDelivery, type DeliveryLogRow, WebhookDeliveriesRepo } from "./WebhookDeliveriesRepo.ts"
import { standardSecretPrefix } from "./WebhookSignature.ts"
import { type SubscriptionChanges, type SubscriptionRow, WebhookSubscriptionsRepo } from "./WebhookSubscriptionsRepo.ts"

/** The administrator making a change, from the session principal. */
export interface AdminCaller {
  readonly tenantId: string
  readonly userId: string
}

type Subscription = typeof Webhooks.WebhookSubscription.Type
type Delivery = typeof Webhooks.Delivery.Type

const defaultLogLimit = 50
const maxLogLimit = 200

const subscriptionNotFound = (id: string) => new Errors.NotFound({ error: `webhook subscription ${id} not found` })

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

/** How long a replica may sign with a previous secret it read before (deliveries look it up at most this often). */
const previousSecretTtl = "5 seconds"

/** A new secret in Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
const generateSecret = () => `${standardSecretPrefix}${randomBytes(32).toString("base64")}`

const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  name: row.name,
  url: row.url,
  event_filter: row.event_filter,
  is_active: row.is_active,
  has_signing_secret: row.signing_secret !== null,
  previous_secret_expires_at: row.previous_signing_secret === null ? null : iso(row.previous_signing_secret_expires_at),
  total_delivered: row.total_delivered,
  total_dead_letter: row.total_dead_letter,
  created_at: row.created_at.toISOString()
})

const toDelivery = (row: DeliveryLogRow): Delivery => ({
  id: row.id,
  event: row.event,
  status: row.status,
  attempts: row.attempts,
  last_status_code: row.last_status_code,
  last_error: row.last_error,
  last_duration_ms: row.last_duration_ms,
  created_at: row.created_at.toISOString(),
  last_attempt_at: iso(row.last_attempt_at),
  next_attempt_at: iso(row.next_attempt_at),
  delivered_at: iso(row.delivered_at)
})

/** Decrypted signing secrets kept in memory at most. */
const decryptedSecretsKept = 1_000

export class WebhookSubscriptions extends Context.Service<WebhookSubscriptions, {
  readonly list: (tenantId: string) => Effect.Effect<typeof Webhooks.WebhookSubscriptionList.Type>
  readonly create: (
    admin: AdminCaller,
    payload: typeof Webhooks.CreateWebhookSubscription.Type
  ) => Effect.Effect<Subscription, Errors.InvalidRequest>
  readonly update: (
    admin: AdminCaller,
    id: string,
    payload: typeof Webhooks.UpdateWebhookSubscription.Type
  ) => Effect.Effect<Subscription, Errors.InvalidRequest | Errors.NotFound>
  readonly remove: (admin: AdminCaller, id: string) => Effect.Effect<typeof Webhooks.Deleted.Type, Errors.NotFound>
  /** Newest first; `cursor` is the `next_cursor` of the previous page. */
  readonly log: (
    tenantId: string,
    id: string,
    options?: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
  ) => Effect.Effect<typeof Webhooks.DeliveryLog.Type, Errors.InvalidRequest | Errors.NotFound>
  /** Schedules a dead-lettered delivery again, with a fresh set of attempts: 404 unknown, 409 not dead-lettered. */
  readonly retry: (
    admin: AdminCaller,
    id: string,
    deliveryId: string
  ) => Effect.Effect<typeof Webhooks.RetryScheduled.Type, Errors.NotFound | Errors.Conflict>
  /** Makes a new signing secret current; the current one stays valid for the window. */
  readonly rotateSecret: (
    admin: AdminCaller,
    id: string,
    payload: typeof Webhooks.RotateSigningSecret.Type
  ) => Effect.Effect<typeof Webhooks.SigningSecretRotated.Type, Errors.NotFound>
  /**
   * The secrets a delivery is signed with, current first: none for an
   * unsigned subscription, two during a rotation window.
   */
  readonly signingSecrets: (
    claim: Pick<ClaimedDelivery, "subscription_id" | "signing_secret">
  ) => Effect.Effect<ReadonlyArray<string>, DecryptionFailed | SqlError>
}>()("@agent-platform/server/Webhooks/WebhookSubscriptions") {
  static readonly layer = Layer.effect(
    WebhookSubscriptions,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* WebhookSubscriptionsRepo
      const deliveries = yield* WebhookDeliveriesRepo
      const audit = yield* AuditLog
      const encryption = yield* Encryption
      const guard = yield* OutboundGuard

      const validateUrl = Effect.fnUntraced(function*(raw: string) {
        if (!URL.canParse(raw) || !namesHost(raw)) {
          return yield* new Errors.InvalidRequest({
            error: "`url` is not a valid absolute URL with a host (https://host/path)"
          })
        }
        const url = new URL(raw)
        const allowed = url.protocol === "https:" || (guard.allowPrivateNetworks && url.protocol === "http:")
        if (!allowed) {
          return yield* new Errors.InvalidRequest({
            error: guard.allowPrivateNetworks ? "`url` must be an http or https URL" : "`url` must be an https URL"
          })
        }
        yield* guard.check(url).pipe(
          Effect.mapError((refused) => new Errors.InvalidRequest({ error: `\`url\` ${refused.message}` }))
        )
      })

      const audited = (admin: AdminCaller, event: string, id: string, data: Record<string, unknown>) =>
        audit.append("admin_audit_log", {
          tenantId: admin.tenantId,
          event,
          actor: `user:${admin.userId}`,
          target: `webhook_subscription:${id}`,
          data
        })

      const findOrFail = (tenantId: string, id: string) =>
        Effect.gen(function*() {
          const row = isUuid(id) ? yield* repo.find(tenantId, id).pipe(Effect.orDie) : undefined
          if (row === undefined) return yield* subscriptionNotFound(id)
          return row
        })

      const previousSecrets = yield* Cache.make({
        lookup: (subscriptionId: string) => repo.previousSecret(subscriptionId),
        capacity: 10_000,
        timeToLive: previousSecretTtl
      })

      const list = (tenantId: string) =>
        repo.list(tenantId).pipe(
          Effect.map((rows) => ({ subscriptions: rows.map(toSubscription) })),
          Effect.orDie
        )

      const create = Effect.fn("WebhookSubscriptions.create")(function*(
        admin: AdminCaller,
        payload: typeof Webhooks.CreateWebhookSubscription.Type
      ) {
        yield* validateUrl(payload.url)
        const secret = payload.signing_secret ?? null
        const row = yield* Effect.gen(function*() {
          const row = yield* repo.insert({
            tenantId: admin.tenantId,
            name: payload.name,
            url: payload.url,
            eventFilter: payload.event_filter ?? "*",
            signingSecret: secret === null ? null : encryption.encrypt(secret),
            createdBy: admin.userId
          })
          yield* audited(admin, "webhook_subscription.created", row.id, {
            name: row.name,
            url: row.url,
            event_filter: row.event_filter,
            has_signing_secret: secret !== null
          })
          return row
        }).pipe(sql.withTransaction, Effect.orDie)
        return toSubscription(row)
      })

      const update = Effect.fn("WebhookSubscriptions.update")(function*(
        admin: AdminCaller,
        id: string,
        payload: typeof Webhooks.UpdateWebhookSubscription.Type
      ) {
        yield* findOrFail(admin.tenantId, id)
        if (payload.url !== undefined) yield* validateUrl(payload.url)
        const changes: SubscriptionChanges = {
          ...(payload.name === undefined ? {} : { name: payload.name }),
          ...(payload.url === undefined ? {} : { url: payload.url }),
          ...(payload.event_filter === undefined ? {} : { event_filter: payload.event_filter }),
          ...(payload.is_active === undefined ? {} : { is_active: payload.is_active }),
          // Replacing the secret here is immediate: it ends any rotation window.
          ...(payload.signing_secret === undefined
            ? {}
            : {
              signing_secret: payload.signing_secret === null ? null : encryption.encrypt(payload.signing_secret),
              previous_signing_secret: null,
              previous_signing_secret_expires_at: null
            })
        }
        const row = yield* Effect.gen(function*() {
          const row = yield* repo.update(admin.tenantId, id, changes)
          if (row !== undefined) {
            yield* audited(admin, "webhook_subscription.updated", id, {
              ...changes,
              ...(changes.signing_secret === undefined
                ? {}
                : { signing_secret: changes.signing_secret === null ? "removed" : "replaced" })
            })
          }
          return row
        }).pipe(sql.withTransaction, Effect.orDie)
        if (row === undefined) return yield* subscriptionNotFound(id)
        if (changes.signing_secret !== undefined) yield* Cache.invalidate(previousSecrets, id)
        return toSubscription(row)
      })

      const remove = Effect.fn("WebhookSubscriptions.remove")(function*(admin: AdminCaller, id: string) {
        const row = yield* findOrFail(admin.tenantId, id)
        const removed = yield* Effect.gen(function*() {
          const removed = yield* repo.remove(admin.tenantId, id)
          if (removed) yield* audited(admin, "webhook_subscription.deleted", id, { name: row.name, url: row.url })
          return removed
        }).pipe(sql.withTransaction, Effect.orDie)
        if (!removed) return yield* subscriptionNotFound(id)
        return { success: true as const, message: `webhook subscription ${id} deleted` }
      })

      const log = Effect.fn("WebhookSubscriptions.log")(function*(
        tenantId: string,
        id: string,
        options?: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
      ) {
        const cursor = options?.cursor
        if (cursor !== undefined && !/^[1-9][0-9]{0,17}$/.test(cursor)) {
          return yield* new Errors.InvalidRequest({ error: "`cursor` must be the `next_cursor` of a previous page" })
        }
        yield* findOrFail(tenantId, id)
        const limit = Math.min(Math.max(Math.trunc(options?.limit ?? defaultLogLimit), 1), maxLogLimit)
        const rows = yield* deliveries.log({ tenantId, subscriptionId: id, limit: limit + 1, before: cursor ?? null })
          .pipe(
            Effect.orDie
          )
        const page = rows.slice(0, limit)
        return {
          deliveries: page.map(toDelivery),
          next_cursor: rows.length > limit ? page[page.length - 1].seq : null
        }
      })

      const retry = Effect.fn("WebhookSubscriptions.retry")(
        function*(admin: AdminCaller, id: string, deliveryId: string) {
          const subscription = yield* findOrFail(admin.tenantId, id)
          const where = { tenantId: admin.tenantId, subscriptionId: id, deliveryId }
          const status = isUuid(deliveryId) ? yield* deliveries.findStatus(where).pipe(Effect.orDie) : undefined
          if (status === undefined) {
            return yield* new Errors.NotFound({ error: `delivery ${deliveryId} not found for this subscription` })
          }
          if (status !== "dead_letter") {
            return yield* new Errors.Conflict({
              error: `delivery ${deliveryId} is ${status}, not dead_letter; only dead letters can be retried`
            })
          }
          if (!subscription.is_active) {
            return yield* new Errors.Conflict({
              error:
                `webhook subscription ${id} is disabled; re-enable it (PATCH {is_active: true}) before retrying its deliveries`
            })
          }
          const scheduled = yield* Effect.gen(function*() {
            const scheduled = yield* deliveries.reschedule(where)
            if (scheduled) yield* audited(admin, "webhook_delivery.retried", id, { delivery_id: deliveryId })
            return scheduled
          }).pipe(sql.withTransaction, Effect.orDie)
          // Another administrator retried it in between.
          if (!scheduled) {
            return yield* new Errors.Conflict({ error: `delivery ${deliveryId} is no longer dead_letter` })
          }
          return {
            success: true as const,
            delivery_id: deliveryId,
            status: "pending" as const,
            message: "retry scheduled"
          }
        }
      )

      const rotateSecret = Effect.fn("WebhookSubscriptions.rotateSecret")(function*(
        admin: AdminCaller,
        id: string,
        payload: typeof Webhooks.RotateSigningSecret.Type
      ) {
        yield* findOrFail(admin.tenantId, id)
        const secret = payload.signing_secret ?? generateSecret()
        const windowSeconds = payload.previous_secret_valid_for_seconds ?? Webhooks.defaultRotationWindowSeconds
        const previousExpiresAt = new Date((yield* Clock.currentTimeMillis) + windowSeconds * 1000)
        const row = yield* Effect.gen(function*() {
          const row = yield* repo.rotateSecret(admin.tenantId, id, encryption.encrypt(secret), previousExpiresAt)
          if (row !== undefined) {
            yield* audited(admin, "webhook_subscription.secret_rotated", id, {
              previous_secret_expires_at: iso(row.previous_signing_secret_expires_at),
              generated: payload.signing_secret === undefined
            })
          }
          return row
        }).pipe(sql.withTransaction, Effect.orDie)
        if (row === undefined) return yield* subscriptionNotFound(id)
        yield* Cache.invalidate(previousSecrets, id)
        return {
          subscription: toSubscription(row),
          signing_secret: secret,
          previous_secret_expires_at: row.previous_signing_secret === null
            ? null
            : iso(row.previous_signing_secret_expires_at)
        }
      })

      // Decrypting costs as much as signing: a secret is decrypted once, not per delivery. Keyed by ciphertext
      // (a ciphertext always decrypts to the same secret), so a rotation never serves a stale one.
      const decrypted = new Map<string, string>()
      const decrypt = (ciphertext: string) => {
        const known = decrypted.get(ciphertext)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.tap(encryption.decrypt(ciphertext), (secret) =>
          Effect.sync(() => {
            if (decrypted.size >= decryptedSecretsKept) decrypted.clear()
            decrypted.set(ciphertext, secret)
          }))
      }

      const signingSecrets = (claim: Pick<ClaimedDelivery, "subscription_id" | "signing_secret">) =>
        Effect.gen(function*() {
          if (claim.signing_secret === null) return []
          const current = yield* decrypt(claim.signing_secret)
          const previous = yield* Cache.get(previousSecrets, claim.subscription_id)
          return previous === undefined ? [current] : [current, yield* decrypt(previous)]
        })

      return WebhookSubscriptions.of({ list, create, update, remove, log, retry, rotateSecret, signingSecrets })
    })
  ).pipe(
    Layer.provide(Layer.mergeAll(WebhookSubscriptionsRepo.layer, WebhookDeliveriesRepo.layer, OutboundGuard.layer))
  )
}
