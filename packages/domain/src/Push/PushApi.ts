import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc, openBody } from "../Doc.ts"
import { InvalidRequest, NotFound, ServiceUnavailable } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import {
  CreatePushSubscription,
  PushSubscription,
  PushSubscriptionDeleted,
  PushSubscriptionList,
  VapidPublicKey
} from "./Push.ts"
import { PushEndpointTaken } from "./PushErrors.ts"

/** Web Push for the signed-in user's browsers (`/api/push`). */
export class PushApi extends HttpApiGroup.make("push")
  .add(
    HttpApiEndpoint.get("vapidPublicKey", "/vapid-public-key", { success: VapidPublicKey, error: [ServiceUnavailable] })
      .annotateMerge(doc(
        "The VAPID public key",
        "For `PushManager.subscribe({applicationServerKey})`. From `VAPID_PUBLIC_KEY`; with the embedded database and no key configured, generated once into `DATA_DIR`. 503 when Web Push is not configured (PostgreSQL without `VAPID_*`)."
      )),
    HttpApiEndpoint.get("listSubscriptions", "/subscriptions", { success: PushSubscriptionList })
      .annotateMerge(
        doc("List my push subscriptions", "The browsers registered for Web Push by the signed-in user, oldest first.")
      ),
    HttpApiEndpoint.post("subscribe", "/subscriptions", {
      payload: openBody(CreatePushSubscription),
      success: PushSubscription.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, PushEndpointTaken, ServiceUnavailable]
    }).annotateMerge(doc(
      "Register a push subscription",
      "Send the browser's `PushSubscription` JSON. The endpoint must be https (http only where `ACTIONS_ALLOW_PRIVATE_NETWORKS` allows internal targets: development and tests). Registering your endpoint again updates its keys and keeps its id. An endpoint belongs to one account: one registered by another user (of this tenant or another) moves to the caller only when the request carries that subscription's own keys (`p256dh` and `auth`, known only to the browser and this service: the same browser profile, now signed in to another account); it then gets a new id, and pushes still queued for the previous account are dropped. Otherwise 409 `PushEndpointTaken`, and the subscription stays where it was: a browser switching accounts can `unsubscribe()` its `PushSubscription` and subscribe again for a new endpoint. 400 for malformed keys."
    )),
    HttpApiEndpoint.delete("unsubscribe", "/subscriptions/:id", {
      params: { id: Schema.String },
      success: PushSubscriptionDeleted,
      error: [NotFound]
    }).annotateMerge(doc("Delete a push subscription", "404 for another user's or an unknown subscription."))
  )
  .middleware(SessionAuth)
  .prefix("/api/push")
  .annotateMerge(OpenApi.annotations({
    title: "Notifications",
    description:
      "In-app notifications (room invitations with a deep link), Web Push subscriptions with the service's VAPID public key, and the signed-in user's notification preferences."
  }))
{}
