/** The handlers of `/api/room-blueprints`. */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { Blueprints } from "./Blueprints.ts"

export const BlueprintsHttp = HttpApiBuilder.group(Api, "blueprints", (handlers) =>
  Effect.gen(function*() {
    const blueprints = yield* Blueprints
    return handlers
      .handle("list", () => Effect.flatMap(currentUser, (user) => blueprints.list(user.tenantId)))
      .handle("create", ({ payload }) => Effect.flatMap(currentUser, (user) => blueprints.create(user, payload)))
      .handle("seedDefaults", ({ payload }) =>
        Effect.flatMap(currentUser, (user) => blueprints.seedDefaults(user, payload.space_id)))
  }))
