/**
 * The handlers of `/v1/knowledge`. A space-bound key reaches the files of its
 * space's agents only (Access/SpaceBinding.ts): another space's agent or file
 * answers exactly as a missing one.
 */
import { Api, Errors } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { boundSpace, SpaceBinding } from "../Access/SpaceBinding.ts"
import { currentKey } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { KnowledgeFiles } from "./KnowledgeFiles.ts"

/** The 404 body of KnowledgeFiles for a missing file, which a bound key gets for another space's. */
const fileNotFound = (fileId: string) => new Errors.NotFound({ error: `knowledge file ${fileId} not found` })

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.gen(function*() {
    const files = yield* KnowledgeFiles
    const binding = yield* SpaceBinding
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const key = yield* currentKey
          const listed = yield* files.list({ tenantId: key.tenantId, agentId: query.agent_id })
          const reachable = yield* binding.reachableAgents(key)
          return { files: reachable === undefined ? listed : listed.filter((file) => reachable.has(file.agent_id)) }
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
          const file = yield* files.get({ tenantId: key.tenantId, fileId: params.id })
          if (!(yield* binding.reachesAgent(key, file.agent_id))) return yield* fileNotFound(params.id)
          yield* files.remove({ tenantId: key.tenantId, fileId: params.id })
          return { success: true as const, message: "Knowledge file and its chunks deleted." }
        }).pipe(orDieOnSql))
  }))
