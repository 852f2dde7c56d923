/** The handlers of `/api/notifications`: the caller's own inbox. */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { Inbox } from "./Inbox.ts"

export const InboxHttp = HttpApiBuilder.group(Api, "notifications", (handlers) =>
  Effect.gen(function*() {
    const inbox = yield* Inbox
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(currentUser, (user) => inbox.list(user, query)))
      .handle("markRead", ({ params }) => Effect.flatMap(currentUser, (user) => inbox.markRead(user, params.id)))
  }))
