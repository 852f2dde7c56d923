import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import { Notification, NotificationList } from "./Notification.ts"

/** The caller's in-app notifications (`/api/notifications`). */
export class InboxApi extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: {
        limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(100))),
        cursor: Schema.optionalKey(Schema.String)
      },
      success: NotificationList,
      error: [InvalidRequest]
    }).annotateMerge(doc(
      "List my notifications",
      "The signed-in user's notifications, newest first, `limit` (default 50) per page, with the number still unread."
    )),
    HttpApiEndpoint.post("markRead", "/:id/read", {
      params: { id: Schema.String },
      success: Notification,
      error: [NotFound]
    }).annotateMerge(
      doc(
        "Mark a notification read",
        "Idempotent: the first read time is kept. 404 for another user's or an unknown notification."
      )
    )
  )
  .middleware(SessionAuth)
  .prefix("/api/notifications")
  .annotateMerge(OpenApi.annotations({
    title: "Notifications",
    description:
      "In-app notifications (room invitations with a deep link), Web Push subscriptions with the service's VAPID public key, and the signed-in user's notification preferences."
  }))
{}
