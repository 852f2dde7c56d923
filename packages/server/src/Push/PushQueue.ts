/**
 * Queues a Web Push for a user when the rules allow it (spec: rooms rule 1):
 * the tenant flag `push_notifications` is on, the user has not opted out, has
 * subscriptions, and the service has a VAPID key pair. Runs in the caller's
 * transaction, so a push is queued exactly when its notification commits;
 * `wake`, after the commit, starts the jobs worker (PushDelivery.ts) on every
 * replica at once instead of at its next poll.
 */
import { Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { Notifications } from "../Platform/Notifications.ts"
import { Tenants } from "../Tenants/Tenants.ts"
import { PushDeliveriesRepo } from "./PushDeliveriesRepo.ts"
import { PushSubscriptionsRepo } from "./PushSubscriptionsRepo.ts"
import { VapidKeys } from "./VapidKeys.ts"

/** The notification topic that wakes the delivery worker. */
export const pushTopic = "push"

/** What a push carries (encrypted end to end for the browser's service worker). */
export interface PushMessage {
  readonly type: "room_invitation"
  readonly title: string
  readonly body: string
  readonly url: string
  readonly room_id: string | null
  readonly notification_id: string | null
}

export class PushQueue extends Context.Service<PushQueue, {
  /** Queues the message to each of the user's subscriptions when allowed; the number queued. */
  readonly enqueue: (input: {
    readonly tenantId: string
    readonly userId: string
    readonly message: PushMessage
  }) => Effect.Effect<number, SqlError>
  /** Tells the delivery workers that pushes were queued (call after the commit). */
  readonly wake: Effect.Effect<void>
}>()("@agent-platform/server/Push/PushQueue") {
  static readonly layer = Layer.effect(
    PushQueue,
    Effect.gen(function*() {
      const tenants = yield* Tenants
      const subscriptions = yield* PushSubscriptionsRepo
      const deliveries = yield* PushDeliveriesRepo
      const vapid = yield* VapidKeys
      const notifications = yield* Notifications
      return PushQueue.of({
        enqueue: (input) =>
          Effect.gen(function*() {
            const flags = yield* tenants.flags(input.tenantId)
            if (flags?.push_notifications !== true) return 0
            if (yield* subscriptions.optedOut(input.tenantId, input.userId)) return 0
            const configured = yield* Effect.match(vapid.get, { onFailure: () => false, onSuccess: () => true })
            if (!configured) return 0
            const queued = yield* deliveries.enqueueForUser({
              tenantId: input.tenantId,
              userId: input.userId,
              notificationId: input.message.notification_id,
              payload: input.message
            })
            return queued
          }),
        wake: notifications.publish(pushTopic, "").pipe(
          Effect.catchCause((cause) => Effect.logWarning("could not wake the push workers; they poll", cause))
        )
      })
    })
  )
}
