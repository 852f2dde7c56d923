/** The handlers of `/api/webhook-subs` (administrators), over the WebhookSubscriptions service. */
import { Api, type UserPrincipal } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { type AdminCaller, WebhookSubscriptions } from "./WebhookSubscriptions.ts"

const callerOf = (user: UserPrincipal): AdminCaller => ({ tenantId: user.tenantId, userId: user.userId })

const admin = Effect.map(currentUser, callerOf)

export const WebhooksHttp = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const subscriptions = yield* WebhookSubscriptions
    return handlers
      .handle("list", () => Effect.flatMap(admin, (caller) => subscriptions.list(caller.tenantId)))
      .handle("create", ({ payload }) => Effect.flatMap(admin, (caller) => subscriptions.create(caller, payload)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(admin, (caller) => subscriptions.update(caller, params.id, payload)))
      .handle("delete", ({ params }) =>
        Effect.flatMap(admin, (caller) => subscriptions.remove(caller, params.id)))
      .handle("log", ({ params, query }) =>
        Effect.flatMap(admin, (caller) =>
          subscriptions.log(caller.tenantId, params.id, { limit: query.limit, cursor: query.cursor })))
      .handle("retry", ({ params, payload }) =>
        Effect.flatMap(admin, (caller) =>
          subscriptions.retry(caller, params.id, payload.delivery_id)))
      .handle("rotateSecret", ({ params, payload }) =>
        Effect.flatMap(admin, (caller) =>
          subscriptions.rotateSecret(caller, params.id, payload)))
  }))
