/**
 * Web Push (RFC 8030, message encryption RFC 8291, VAPID RFC 8292): the
 * server's public key for `PushManager.subscribe`, and the subscriptions a
 * browser hands back (its `PushSubscription.toJSON()`).
 */
import { Schema } from "effect"

export const VapidPublicKey = Schema.Struct({
  public_key: Schema.String.annotate({
    description:
      "The VAPID public key (base64url, uncompressed P-256 point): pass as `applicationServerKey` to `PushManager.subscribe`"
  })
}).annotate({ identifier: "VapidPublicKey" })

const base64url = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9_-]+={0,2}$/, { message: "must be base64url" }),
  Schema.isMaxLength(200)
)

export const CreatePushSubscription = Schema.Struct({
  endpoint: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({
    description: "The push service URL (https)"
  }),
  expirationTime: Schema.optionalKey(Schema.NullOr(Schema.Number)),
  keys: Schema.Struct({
    p256dh: base64url.annotate({ description: "The browser's P-256 public key (65 bytes, base64url)" }),
    auth: base64url.annotate({ description: "The 16-byte authentication secret (base64url)" })
  })
})

export const PushSubscription = Schema.Struct({
  id: Schema.String,
  endpoint: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "PushSubscription" })

export const PushSubscriptionCreated = PushSubscription.annotate({ httpApiStatus: 201 })

export const PushSubscriptionList = Schema.Struct({ subscriptions: Schema.Array(PushSubscription) })

export const PushSubscriptionDeleted = Schema.Struct({ success: Schema.Literal(true) })
