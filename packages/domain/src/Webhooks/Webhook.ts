/** Outbound webhook subscriptions and deliveries (spec: "Outbound webhooks"). */
import { Schema } from "effect"
import { isCharacterCountBetween, StorableString } from "../Text.ts"

export const EventFilter = Schema.Literals(["on_action_executed", "on_action_failed", "*"])
export type EventFilter = typeof EventFilter.Type

export const WebhookEvent = Schema.Literals(["on_action_executed", "on_action_failed"])
export type WebhookEvent = typeof WebhookEvent.Type

export const WebhookSubscription = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  url: Schema.String,
  event_filter: EventFilter,
  is_active: Schema.Boolean,
  has_signing_secret: Schema.Boolean.annotate({ description: "The secret itself is never returned" }),
  previous_secret_expires_at: Schema.NullOr(Schema.String).annotate({
    description: "After a rotation: until then (ISO 8601), deliveries are signed with the previous secret too"
  }),
  total_delivered: Schema.Int,
  total_dead_letter: Schema.Int,
  created_at: Schema.String
}).annotate({ identifier: "WebhookSubscription" })

export const WebhookSubscriptionList = Schema.Struct({ subscriptions: Schema.Array(WebhookSubscription) })

const Url = StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({ format: "uri" })
const Secret = Schema.String.check(isCharacterCountBetween(16, 256))

export const CreateWebhookSubscription = Schema.Struct({
  name: StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  url: Url,
  event_filter: Schema.optionalKey(EventFilter).annotate({ description: "Default `*`" }),
  signing_secret: Schema.optionalKey(Schema.NullOr(Secret))
})

export const UpdateWebhookSubscription = Schema.Struct({
  name: Schema.optionalKey(StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  url: Schema.optionalKey(Url),
  event_filter: Schema.optionalKey(EventFilter),
  signing_secret: Schema.optionalKey(Schema.NullOr(Secret)),
  is_active: Schema.optionalKey(Schema.Boolean)
})

export const DeliveryStatus = Schema.Literals(["pending", "delivering", "delivered", "dead_letter"]).annotate({
  description:
    "`pending` waits for its next attempt, `delivering` is in flight (retried after a visibility timeout if its worker dies), `delivered` got a 2xx, `dead_letter` exhausted its attempts (or its subscription answered 410 Gone)"
})

export const Delivery = Schema.Struct({
  id: Schema.String,
  event: WebhookEvent,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  last_duration_ms: Schema.NullOr(Schema.Int),
  created_at: Schema.String,
  last_attempt_at: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "WebhookDelivery" })

export const DeliveryLog = Schema.Struct({
  deliveries: Schema.Array(Delivery),
  next_cursor: Schema.NullOr(Schema.String).annotate({ description: "Pass as `cursor` for the next page" })
})

export const RetryDelivery = Schema.Struct({ delivery_id: Schema.String.check(Schema.isMinLength(1)) })

export const RetryScheduled = Schema.Struct({
  success: Schema.Literal(true),
  delivery_id: Schema.String,
  status: Schema.Literal("pending"),
  message: Schema.String
})

export const Deleted = Schema.Struct({ success: Schema.Literal(true), message: Schema.String })

/** Default and longest time the previous secret stays valid after a rotation. */
export const defaultRotationWindowSeconds = 24 * 60 * 60
export const maxRotationWindowSeconds = 7 * 24 * 60 * 60

export const RotateSigningSecret = Schema.Struct({
  signing_secret: Schema.optionalKey(Secret).annotate({
    description:
      "The new secret; absent: the service generates one in Standard Webhooks form (`whsec_` + base64 of 32 random bytes)"
  }),
  previous_secret_valid_for_seconds: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(maxRotationWindowSeconds))
  ).annotate({
    description:
      "How long deliveries stay signed with the current secret too (default 86400, at most 604800; 0 ends it now)"
  })
}).annotate({ examples: [{ previous_secret_valid_for_seconds: 86400 }] })

export const SigningSecretRotated = Schema.Struct({
  subscription: WebhookSubscription,
  signing_secret: Schema.String.annotate({ description: "The new current secret; shown once, never again" }),
  previous_secret_expires_at: Schema.NullOr(Schema.String).annotate({
    description:
      "Until then (ISO 8601) deliveries carry a signature with the previous secret too; null when there was none"
  })
})
