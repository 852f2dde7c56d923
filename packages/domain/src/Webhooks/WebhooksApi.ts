import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { Conflict, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import {
  CreateWebhookSubscription,
  Deleted,
  DeliveryLog,
  RetryDelivery,
  RetryScheduled,
  RotateSigningSecret,
  SigningSecretRotated,
  UpdateWebhookSubscription,
  WebhookSubscription,
  WebhookSubscriptionList
} from "./Webhook.ts"

const id = { id: Schema.String }

export const signingDescription =
  "Each delivery is a POST of `{id, event, created_at, tenant_id, data}` signed in two schemes at once, when the subscription has a signing secret. " +
  "**The service's own:** `X-Service-Event`, `X-Service-Delivery` (the delivery id, stable across retries), `X-Service-Timestamp` (Unix seconds of this attempt) and `X-Service-Signature: sha256=<hex>` where hex is HMAC-SHA256(secret, `<X-Service-Timestamp>.<raw body>`). " +
  "**Standard Webhooks** (standardwebhooks.com; its libraries and Svix's verify deliveries as they are): `webhook-id` (the delivery id), `webhook-timestamp` and `webhook-signature: v1,<base64>` where base64 is HMAC-SHA256(key, `<webhook-id>.<webhook-timestamp>.<raw body>`); the key is the secret's bytes, or for a secret in `whsec_<base64>` form the bytes it encodes. " +
  "**Rotation:** POST /api/webhook-subs/{id}/rotate-secret makes a new secret current and keeps the previous one valid for a window; meanwhile each delivery carries both signatures, the current one first: comma-separated in `X-Service-Signature`, space-separated in `webhook-signature`. Accept a delivery when any signature matches. " +
  "Reject timestamps older than 5 minutes to stop replays. 2xx = delivered; other answers are retried with exponential backoff and jitter, then `dead_letter`; 410 Gone disables the subscription."

/** Outbound webhook subscriptions (`/api/webhook-subs`, admin). */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/", { success: WebhookSubscriptionList, error: [NotImplemented] })
      .annotateMerge(
        doc(
          "List subscriptions",
          "The tenant's subscriptions with their delivery counts; signing secrets are never returned."
        )
      ),
    HttpApiEndpoint.post("create", "/", {
      payload: CreateWebhookSubscription,
      success: WebhookSubscription.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(
      doc(
        "Subscribe",
        `The URL must be https (http and private addresses only where the server allows private networks). ${signingDescription}`
      )
    ),
    HttpApiEndpoint.patch("update", "/:id", {
      params: id,
      payload: UpdateWebhookSubscription,
      success: WebhookSubscription,
      error: [InvalidRequest, NotFound, NotImplemented]
    }).annotateMerge(doc("Update a subscription", "E.g. `{is_active: true}` re-enables one disabled by a 410.")),
    HttpApiEndpoint.delete("delete", "/:id", { params: id, success: Deleted, error: [NotFound, NotImplemented] })
      .annotateMerge(doc("Delete a subscription", "Stops its deliveries and deletes its delivery log.")),
    HttpApiEndpoint.get("log", "/:id/log", {
      params: id,
      query: {
        limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(200))),
        cursor: Schema.optionalKey(Schema.String)
      },
      success: DeliveryLog,
      error: [InvalidRequest, NotFound, NotImplemented]
    }).annotateMerge(doc("Delivery log", "Newest first; `limit` default 50.")),
    HttpApiEndpoint.post("retry", "/:id/retry", {
      params: id,
      payload: RetryDelivery,
      success: RetryScheduled,
      error: [InvalidRequest, NotFound, Conflict, NotImplemented]
    }).annotateMerge(
      doc("Retry a dead-lettered delivery", "404 for an unknown delivery; 409 when it is not `dead_letter`.")
    ),
    HttpApiEndpoint.post("rotateSecret", "/:id/rotate-secret", {
      params: id,
      payload: RotateSigningSecret,
      success: SigningSecretRotated,
      error: [InvalidRequest, NotFound]
    }).annotateMerge(doc(
      "Rotate the signing secret",
      "Makes a new secret current (the one given, or a generated `whsec_` secret returned once) and keeps the current one valid for `previous_secret_valid_for_seconds` (default one day): until then every delivery carries a signature with each, so receivers can switch secrets without missing one. A subscription without a secret gets its first one. Replicas other than the one answering pick the rotation up within 5 seconds."
    ))
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/webhook-subs")
  .annotateMerge(OpenApi.annotations({ title: "Webhooks", description: signingDescription }))
{}
