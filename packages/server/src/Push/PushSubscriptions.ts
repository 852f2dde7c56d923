/**
 * A user's browsers registered for Web Push, and their opt-out preference.
 * A subscription's keys are checked as the encryption will use them (a P-256
 * point and a 16-byte secret), and its endpoint as an outbound call will be:
 * https, or http only where internal targets are allowed (development, tests).
 *
 * An endpoint is one browser profile's registration with its push service,
 * and it belongs to one account at a time. The same user registering it again
 * updates its keys. Another account (of this tenant or another) takes it over
 * only by presenting the subscription's own keys: the auth secret is made by
 * the browser and handed to nobody but this service, so whoever has it is that
 * browser, now signed in to another account. Knowing the endpoint URL alone
 * (it passes through the push service and whatever logs it) is not enough: that
 * is 409 `PushEndpointTaken`, and the subscription stays with its owner.
 */
import { Errors, type Me, type Push, PushErrors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import { timingSafeEqual } from "node:crypto"
import { OutboundGuard } from "../Actions/OutboundGuard.ts"
import { namesHost } from "../Actions/OutboundGuard.ts"
import { isUuid } from "../Platform/Ids.ts"
import { PushSubscriptionsRepo, type Registration, type SubscriptionRow } from "./PushSubscriptionsRepo.ts"
import { VapidKeys } from "./VapidKeys.ts"

const toSubscription = (row: SubscriptionRow): typeof Push.PushSubscription.Type => ({
  id: row.id,
  endpoint: row.endpoint,
  created_at: row.created_at.toISOString()
})

const decodedLength = (base64url: string) => Buffer.from(base64url, "base64url").length

/** Byte arrays compared in constant time (the auth secret is one). */
const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b)

/** Whether `keys` are the ones `row` was registered with (as bytes: the base64url padding may differ). */
const sameKeys = (row: SubscriptionRow, keys: typeof Push.CreatePushSubscription.Type["keys"]) =>
  sameBytes(Buffer.from(row.p256dh, "base64url"), Buffer.from(keys.p256dh, "base64url")) &&
  sameBytes(Buffer.from(row.auth, "base64url"), Buffer.from(keys.auth, "base64url"))

/** What is wrong with a subscription, or undefined. */
const subscriptionProblem = (
  input: typeof Push.CreatePushSubscription.Type,
  allowHttp: boolean
): string | undefined => {
  const url = URL.canParse(input.endpoint) && namesHost(input.endpoint) ? new URL(input.endpoint) : undefined
  if (url === undefined) return "endpoint: not an absolute URL with a host"
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) {
    return "endpoint: a push service URL must be https"
  }
  // Push services name a subscription by its path; credentials in the URL are nobody's push service.
  if (url.username !== "" || url.password !== "") return "endpoint: must not carry a user name or password"
  const key = Buffer.from(input.keys.p256dh, "base64url")
  if (key.length !== 65 || key[0] !== 0x04) {
    return "keys.p256dh: must be an uncompressed P-256 public key (65 bytes, base64url)"
  }
  if (decodedLength(input.keys.auth) !== 16) return "keys.auth: must be a 16-byte secret (base64url)"
  return undefined
}

export class PushSubscriptions extends Context.Service<PushSubscriptions, {
  readonly publicKey: Effect.Effect<typeof Push.VapidPublicKey.Type, Errors.ServiceUnavailable>
  readonly subscribe: (
    user: UserPrincipal,
    input: typeof Push.CreatePushSubscription.Type
  ) => Effect.Effect<
    typeof Push.PushSubscription.Type,
    Errors.InvalidRequest | PushErrors.PushEndpointTaken | Errors.ServiceUnavailable
  >
  readonly list: (user: UserPrincipal) => Effect.Effect<typeof Push.PushSubscriptionList.Type>
  readonly unsubscribe: (user: UserPrincipal, id: string) => Effect.Effect<{ readonly success: true }, Errors.NotFound>
  readonly preferences: (user: UserPrincipal) => Effect.Effect<Me.Preferences>
  readonly setPreferences: (
    user: UserPrincipal,
    input: typeof Me.UpdatePreferences.Type
  ) => Effect.Effect<Me.Preferences>
}>()("@agent-platform/server/Push/PushSubscriptions") {
  static readonly layer = Layer.effect(
    PushSubscriptions,
    Effect.gen(function*() {
      const repo = yield* PushSubscriptionsRepo
      const vapid = yield* VapidKeys
      const guard = yield* OutboundGuard
      const unavailable = Effect.mapError(vapid.get, (error) => new Errors.ServiceUnavailable({ error: error.message }))
      /** Another account's endpoint, given to the caller when they present its keys; undefined otherwise. */
      const takeOver = (registration: Registration, keys: typeof Push.CreatePushSubscription.Type["keys"]) =>
        Effect.gen(function*() {
          const held = yield* repo.findByEndpoint(registration.endpoint)
          // Deleted since the registration was refused: the endpoint is free again.
          if (held === undefined) return yield* repo.register(registration)
          return sameKeys(held, keys) ? yield* repo.takeOver(registration, held) : undefined
        })
      const preferences = (user: UserPrincipal) =>
        Effect.map(
          Effect.orDie(repo.optedOut(user.tenantId, user.userId)),
          (optedOut) => ({ push_notifications: !optedOut })
        )
      return PushSubscriptions.of({
        publicKey: Effect.map(unavailable, (keys) => ({ public_key: keys.publicKey })),
        subscribe: (user, input) =>
          Effect.gen(function*() {
            yield* unavailable
            const problem = subscriptionProblem(input, guard.allowPrivateNetworks)
            if (problem !== undefined) return yield* new Errors.InvalidRequest({ error: problem })
            const registration: Registration = {
              tenantId: user.tenantId,
              userId: user.userId,
              endpoint: input.endpoint,
              p256dh: input.keys.p256dh,
              auth: input.keys.auth
            }
            const row = (yield* Effect.orDie(repo.register(registration))) ??
              (yield* Effect.orDie(takeOver(registration, input.keys)))
            if (row === undefined) {
              return yield* new PushErrors.PushEndpointTaken({
                error:
                  "this push endpoint is registered to another account: unsubscribe it in the browser (PushSubscription.unsubscribe()) and subscribe again for a new endpoint"
              })
            }
            return toSubscription(row)
          }),
        list: (user) =>
          Effect.map(
            Effect.orDie(repo.listOf(user.tenantId, user.userId)),
            (rows) => ({ subscriptions: rows.map(toSubscription) })
          ),
        unsubscribe: (user, id) =>
          Effect.gen(function*() {
            const removed = isUuid(id) && (yield* Effect.orDie(repo.remove(user.tenantId, user.userId, id)))
            if (!removed) return yield* new Errors.NotFound({ error: `push subscription ${id} not found` })
            return { success: true as const }
          }),
        preferences,
        setPreferences: (user, input) =>
          Effect.andThen(
            Effect.orDie(repo.setOptOut(user.tenantId, user.userId, !input.push_notifications)),
            preferences(user)
          )
      })
    })
  )
}
