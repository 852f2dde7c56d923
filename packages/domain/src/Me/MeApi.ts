import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc, openBody } from "../Doc.ts"
import { InvalidRequest } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import { Preferences, UpdatePreferences } from "./Preferences.ts"

/** The signed-in user's preferences (`/api/me`). */
export class MeApi extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("preferences", "/preferences", { success: Preferences })
      .annotateMerge(
        doc(
          "My preferences",
          "The signed-in user's preferences: `push_notifications` (Web Push of invitations, on unless opted out)."
        )
      ),
    HttpApiEndpoint.put("updatePreferences", "/preferences", {
      payload: openBody(UpdatePreferences),
      success: Preferences,
      error: [InvalidRequest]
    }).annotateMerge(doc(
      "Change my preferences",
      "`push_notifications: false` opts out of Web Push (in-app notifications still arrive); `true` opts back in."
    ))
  )
  .middleware(SessionAuth)
  .prefix("/api/me")
  .annotateMerge(OpenApi.annotations({
    title: "Notifications",
    description:
      "In-app notifications (room invitations with a deep link), Web Push subscriptions with the service's VAPID public key, and the signed-in user's notification preferences."
  }))
{}
