import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Api } from "@agent-platform/domain"
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
          return { files: yield* files.list({ tenantId: key.tenantId, agentId: query.agent_id }) }
        }).pipe(orDieOnSql))
      .handle("ingest", ({ payload }) =>
        Effect.flatMap(currentKey, (key) =>
          files.ingest({ tenantId: key.tenantId, agentId: payload.agent_id, filename: payload.filename, content: payload.content })).pipe(
            orDieOnSql
          ))
      .handle("delete", ({ params }) =>
        Effect.gen(function*() {
          const key = yield* currentKey
          yield* files.remove({ tenantId: key.tenantId, fileId: params.id })
          return { success: true as const, message: "Knowledge file and its chunks deleted." }
        }).pipe(orDieOnSql))
  }))
