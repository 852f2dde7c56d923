import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { AccessDenied, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { keyModelTable, SessionAuth } from "../Security.ts"
import { ApiKeyCreated, ApiKeyList, ApiKeyRevoked, CreateApiKey } from "./Key.ts"

/** API key management (spec: "session JWT only; not usable with an API key"). */
export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/", { success: ApiKeyList, error: [NotImplemented] })
      .annotateMerge(doc(
        "List API keys",
        `Active and revoked keys (\`is_active\`), newest first, with their prefix, scopes, space binding and last use; never the secret. Administrators (r_admin, r_superadmin) see every key of the tenant; everyone else sees their own keys.\n\n${keyModelTable}`
      )),
    HttpApiEndpoint.post("create", "/", {
      payload: CreateApiKey,
      success: ApiKeyCreated.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, AccessDenied, NotImplemented]
    }).annotateMerge(doc(
      "Create an API key",
      `The full key is returned once and cannot be retrieved again; it is stored only as a SHA-256 hash. The key belongs to you: it stops working at once (401) if you are blocked or deactivated, or your role changes to one that does not allow its scopes. 400 for an unknown scope or a space that is not the tenant's; 403 for a scope your role does not allow.\n\n${keyModelTable}`
    )),
    HttpApiEndpoint.delete("revoke", "/:id", {
      params: { id: Schema.String },
      success: ApiKeyRevoked,
      error: [NotFound, NotImplemented]
    }).annotateMerge(doc(
      "Revoke an API key",
      "Administrators revoke any key of the tenant, everyone else their own (another's key answers 404, as a missing one). When this answers, every live replica has dropped the key: it is refused (401) from the next request on. A replica that does not confirm within 2 seconds has lost its notification connection, and such a replica stops trusting its key cache after 1.5 seconds without one."
    ))
  )
  .middleware(SessionAuth)
  .prefix("/v1/keys")
  .annotateMerge(OpenApi.annotations({
    title: "API keys",
    description: "API keys of the `/v1` interface: create (shown once), list and revoke, over a signed-in session."
  }))
{}
