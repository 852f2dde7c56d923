import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { Conflict, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import {
  CreateWebhookSubscription,
  Deleted,
  DeliveryLog,
  RetryDelivery,
  RetryScheduled,
  UpdateWebhookSubscription,
  WebhookSubscription,
  WebhookSubscriptionList
} from "./Webhook.ts"

const id = { id: Schema.String }

export const signingDescription =
  "Each delivery is a POST of `{id, event, created_at, tenant_id, data}` with headers `X-Service-Event`, `X-Service-Delivery` (the delivery id, stable across retries), `X-Service-Timestamp` (Unix seconds of this attempt) and, when the subscription has a signing secret, `X-Service-Signature: sha256=<hex>` where hex is HMAC-SHA256(secret, `<X-Service-Timestamp>.<raw body>`). Reject timestamps older than 5 minutes to stop replays. 2xx = delivered; other answers are retried with exponential backoff and jitter, then `dead_letter`; 410 Gone disables the subscription."

/** Outbound webhook subscriptions (`/api/webhook-subs`, admin). */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/", { success: WebhookSubscriptionList, error: [NotImplemented] })
      .annotateMerge(doc("List subscriptions")),
    HttpApiEndpoint.post("create", "/", {
      payload: CreateWebhookSubscription,
      success: WebhookSubscription.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(doc("Subscribe", `The URL must be https (http and private addresses only where the server allows private networks). ${signingDescription}`)),
    HttpApiEndpoint.patch("update", "/:id", {
      params: id,
      payload: UpdateWebhookSubscription,
      success: WebhookSubscription,
      error: [InvalidRequest, NotFound, NotImplemented]
    }).annotateMerge(doc("Update a subscription", "E.g. `{is_active: true}` re-enables one disabled by a 410.")),
    HttpApiEndpoint.delete("delete", "/:id", { params: id, success: Deleted, error: [NotFound, NotImplemented] })
      .annotateMerge(doc("Delete a subscription")),
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
    }).annotateMerge(doc("Retry a dead-lettered delivery", "404 for an unknown delivery; 409 when it is not `dead_letter`."))
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/webhook-subs")
  .annotateMerge(OpenApi.annotations({ title: "Webhooks", description: signingDescription }))
{}
