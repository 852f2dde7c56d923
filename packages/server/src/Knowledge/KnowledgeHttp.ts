/**
 * The handlers of `/v1/knowledge`. A space-bound key reaches the files of its
 * space's agents only (Access/SpaceBinding.ts): another space's agent or file
 * answers exactly as a missing one. The binding is part of each statement
 * (KnowledgeRepo), so it costs a bound key no read of its space's agents.
 */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { currentKey } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { KnowledgeFiles } from "./KnowledgeFiles.ts"

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.gen(function*() {
    const files = yield* KnowledgeFiles
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const key = yield* currentKey
          return {
            files: yield* files.list({ tenantId: key.tenantId, agentId: query.agent_id, spaceId: boundSpace(key) })
          }
        }).pipe(orDieOnSql))
      // The space check is part of the insert (one statement): another space's agent is a missing one.
      .handle("ingest", ({ payload }) =>
        Effect.gen(function*() {
          const key = yield* currentKey
          return yield* files.ingest({
            tenantId: key.tenantId,
            agentId: payload.agent_id,
            spaceId: boundSpace(key),
            filename: payload.filename,
            content: payload.content
          })
        }).pipe(orDieOnSql))
      .handle("delete", ({ params }) =>
        Effect.gen(function*() {
          const key = yield* currentKey
          yield* files.remove({ tenantId: key.tenantId, fileId: params.id, spaceId: boundSpace(key) })
          return { success: true as const, message: "Knowledge file and its chunks deleted." }
        }).pipe(orDieOnSql))
  }))
