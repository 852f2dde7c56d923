/**
 * The handlers of decision records: POST /api/chats/{id}/corrections, GET
 * /api/agents/{id}/corrections, PATCH /api/corrections/{id}. The group brings
 * its flag middleware with it, built on the `Corrections` service, so the
 * server names no more services for it than for its handlers.
 */
import { Api } from "@agent-platform/domain"
import { Effect, Layer } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { Corrections } from "./Corrections.ts"
import { DecisionRecordsEnabledLive } from "./DecisionRecordsFlag.ts"

export const CorrectionsHttp = HttpApiBuilder.group(Api, "corrections", (handlers) =>
  Effect.gen(function*() {
    const corrections = yield* Corrections
    return handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(currentUser, (author) =>
          corrections.create(author, params.id, payload)).pipe(orDieOnSql))
      .handle("listForAgent", ({ params, query }) =>
        Effect.flatMap(currentUser, (reader) =>
          Effect.map(corrections.listForAgent(reader, params.id, query.status), (list) => ({ corrections: list })))
          .pipe(orDieOnSql))
      .handle("resolve", ({ params, payload }) =>
        Effect.flatMap(currentUser, (admin) =>
          corrections.resolve(admin, params.id, payload.status)).pipe(orDieOnSql))
  })).pipe(Layer.provide(DecisionRecordsEnabledLive))
