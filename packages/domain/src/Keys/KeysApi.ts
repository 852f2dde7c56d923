import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import { ApiKeyCreated, ApiKeyList, ApiKeyRevoked, CreateApiKey } from "./Key.ts"

/** API key management (spec: "session JWT only; not usable with an API key"). */
export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/", { success: ApiKeyList, error: [NotImplemented] })
      .annotateMerge(doc("List the tenant's API keys")),
    HttpApiEndpoint.post("create", "/", {
      payload: CreateApiKey,
      success: ApiKeyCreated.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(doc(
      "Create an API key",
      "The full key is returned once and cannot be retrieved again; it is stored only as a SHA-256 hash. 400 for an unknown scope or a space that is not the tenant's."
    )),
    HttpApiEndpoint.delete("revoke", "/:id", {
      params: { id: Schema.String },
      success: ApiKeyRevoked,
      error: [NotFound, NotImplemented]
    }).annotateMerge(doc("Revoke an API key", "The key is refused (401) from the next request on, on every replica."))
  )
  .middleware(SessionAuth)
  .prefix("/v1/keys")
  .annotateMerge(OpenApi.annotations({ title: "API keys" }))
{}
