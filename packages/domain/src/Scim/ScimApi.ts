import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { apiKeySecurity, RequiredScopes } from "../Security.ts"
import {
  asScim,
  ListQuery,
  listResponse,
  PatchOp,
  ScimBadRequest,
  ScimConflict,
  ScimForbidden,
  ScimGroup,
  ScimGroupInput,
  ScimNotFound,
  ScimNotImplemented,
  ScimRateLimited,
  ScimUnauthorized,
  ScimUser,
  ScimUserInput
} from "./Scim.ts"

/** API-key authentication for SCIM, answering in SCIM's own error schema; needs the `scim` scope. */
export class ScimAuth extends HttpApiMiddleware.Service<ScimAuth, { provides: CurrentPrincipal }>()(
  "@agent-platform/domain/Scim/ScimAuth",
  {
    security: { apiKey: apiKeySecurity },
    error: [ScimUnauthorized.pipe(asScim), ScimForbidden.pipe(asScim), ScimRateLimited.pipe(asScim)]
  }
) {}

// SCIM answers errors in its own schema and media type too (RFC 7644 §3.12).
const errors = [
  ScimBadRequest.pipe(asScim),
  ScimNotFound.pipe(asScim),
  ScimConflict.pipe(asScim),
  ScimNotImplemented.pipe(asScim)
] as const
const id = { id: Schema.String }

/** SCIM 2.0 provisioning (`/v1/scim`). */
export class ScimApi extends HttpApiGroup.make("scim")
  .add(
    HttpApiEndpoint.get("listUsers", "/Users", {
      query: ListQuery,
      success: listResponse(ScimUser).pipe(asScim),
      error: errors
    }).annotateMerge(doc("List users", "Filters: `userName eq \"...\"`, `externalId eq \"...\"`.")),
    HttpApiEndpoint.post("createUser", "/Users", {
      payload: [ScimUserInput.pipe(asScim), ScimUserInput],
      success: ScimUser.pipe(asScim, HttpApiSchema.status(201)),
      error: errors
    }).annotateMerge(doc("Create a user")),
    HttpApiEndpoint.get("getUser", "/Users/:id", { params: id, success: ScimUser.pipe(asScim), error: errors })
      .annotateMerge(doc("Read a user")),
    HttpApiEndpoint.put("replaceUser", "/Users/:id", {
      params: id,
      payload: [ScimUserInput.pipe(asScim), ScimUserInput],
      success: ScimUser.pipe(asScim),
      error: errors
    }).annotateMerge(doc("Replace a user")),
    HttpApiEndpoint.patch("patchUser", "/Users/:id", {
      params: id,
      payload: [PatchOp.pipe(asScim), PatchOp],
      success: ScimUser.pipe(asScim),
      error: errors
    }).annotateMerge(doc("Update a user", "`replace` with value `{active: false}` deactivates the user and ends their sessions.")),
    HttpApiEndpoint.delete("deleteUser", "/Users/:id", { params: id, success: HttpApiSchema.NoContent, error: errors })
      .annotateMerge(doc("Delete a user", "Deactivates the user permanently; 204.")),
    HttpApiEndpoint.get("listGroups", "/Groups", {
      query: ListQuery,
      success: listResponse(ScimGroup).pipe(asScim),
      error: errors
    }).annotateMerge(doc("List groups", "Filter: `displayName eq \"...\"`.")),
    HttpApiEndpoint.post("createGroup", "/Groups", {
      payload: [ScimGroupInput.pipe(asScim), ScimGroupInput],
      success: ScimGroup.pipe(asScim, HttpApiSchema.status(201)),
      error: errors
    }).annotateMerge(doc("Create a group")),
    HttpApiEndpoint.get("getGroup", "/Groups/:id", { params: id, success: ScimGroup.pipe(asScim), error: errors })
      .annotateMerge(doc("Read a group")),
    HttpApiEndpoint.patch("patchGroup", "/Groups/:id", {
      params: id,
      payload: [PatchOp.pipe(asScim), PatchOp],
      success: ScimGroup.pipe(asScim),
      error: errors
    }).annotateMerge(doc(
      "Update a group",
      "`add` with path `members` and value `[{value}]` adds members; `remove` with path `members[value eq \"<id>\"]` removes one."
    )),
    HttpApiEndpoint.delete("deleteGroup", "/Groups/:id", { params: id, success: HttpApiSchema.NoContent, error: errors })
      .annotateMerge(doc("Delete a group"))
  )
  .annotateEndpoints(RequiredScopes, ["scim"])
  .middleware(ScimAuth)
  .prefix("/v1/scim")
  .annotateMerge(OpenApi.annotations({ title: "SCIM 2.0" }))
{}
