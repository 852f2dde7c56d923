import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { clientInfo, currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { ApiKeys } from "./ApiKeys.ts"

export const KeysHttp = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const user = yield* currentUser
          return { keys: yield* keys.list(user) }
        }).pipe(orDieOnSql))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const client = yield* clientInfo
          return yield* keys.create(yield* currentUser, payload, client.ipText)
        }).pipe(orDieOnSql))
      .handle("revoke", ({ params }) =>
        Effect.gen(function*() {
          const client = yield* clientInfo
          yield* keys.revoke(yield* currentUser, params.id, client.ipText)
          return { success: true as const, message: "API key revoked: it is refused from now on." }
        }).pipe(orDieOnSql))
  }))
