import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { ApiKeyAuth, RateLimitClass, RequiredScopes } from "../Security.ts"
import { StorableString } from "../Text.ts"
import { IngestAccepted, IngestRequest, KnowledgeFileDeleted, KnowledgeFileList } from "./KnowledgeFile.ts"

/** Knowledge files over the API-key interface (`/v1/knowledge`). */
export class KnowledgeApi extends HttpApiGroup.make("knowledge")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: { agent_id: Schema.optionalKey(StorableString) },
      success: KnowledgeFileList,
      error: [InvalidRequest, NotImplemented]
    })
      .annotate(RequiredScopes, ["files", "knowledge:read"])
      .annotateMerge(
        doc(
          "List knowledge files",
          "The tenant's files, or one agent's with `agent_id`, each with its processing status."
        )
      ),
    HttpApiEndpoint.post("ingest", "/ingest", {
      payload: IngestRequest,
      success: IngestAccepted.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotFound, NotImplemented]
    })
      .annotate(RequiredScopes, ["files", "knowledge:write"])
      .annotate(RateLimitClass, "ingest")
      .annotateMerge(doc(
        "Ingest a document",
        "Queued as `pending`; the ingestion pipeline moves it to `processing` then `ready` (chunked, embedded, indexed), or `failed` with an error. 404 for an unknown agent."
      )),
    HttpApiEndpoint.delete("delete", "/:id", {
      params: { id: Schema.String },
      success: KnowledgeFileDeleted,
      error: [NotFound, NotImplemented]
    })
      .annotate(RequiredScopes, ["files", "knowledge:write"])
      .annotateMerge(doc("Delete a knowledge file", "Removes the file and its indexed chunks."))
  )
  .middleware(ApiKeyAuth)
  .prefix("/v1/knowledge")
  .annotateMerge(OpenApi.annotations({
    title: "Knowledge",
    description:
      "Documents agents answer from: ingestion (asynchronous, pending → processing → ready), listing and deletion, with an API key."
  }))
{}
