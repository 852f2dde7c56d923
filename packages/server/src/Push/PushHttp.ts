/** The handlers of `/api/push` and `/api/me`: the caller's browsers and preferences. */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { PushSubscriptions } from "./PushSubscriptions.ts"

export const PushHttp = HttpApiBuilder.group(Api, "push", (handlers) =>
  Effect.gen(function*() {
    const push = yield* PushSubscriptions
    return handlers
      .handle("vapidPublicKey", () => push.publicKey)
      .handle("listSubscriptions", () => Effect.flatMap(currentUser, push.list))
      .handle("subscribe", ({ payload }) => Effect.flatMap(currentUser, (user) => push.subscribe(user, payload)))
      .handle("unsubscribe", ({ params }) => Effect.flatMap(currentUser, (user) => push.unsubscribe(user, params.id)))
  }))

export const MeHttp = HttpApiBuilder.group(Api, "me", (handlers) =>
  Effect.gen(function*() {
    const push = yield* PushSubscriptions
    return handlers
      .handle("preferences", () => Effect.flatMap(currentUser, push.preferences))
      .handle("updatePreferences", ({ payload }) =>
        Effect.flatMap(currentUser, (user) => push.setPreferences(user, payload)))
  }))
