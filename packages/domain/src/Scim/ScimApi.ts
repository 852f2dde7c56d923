import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { type CurrentPrincipal } from "../Principal.ts"
import { apiKeySecurity, RequiredScopes } from "../Security.ts"
import {
  asScim,
  examples,
  IfMatchHeaders,
  ListQuery,
  listResponse,
  PatchOp,
  ProjectionQuery,
  ScimBadRequest,
  ScimConflict,
  ScimForbidden,
  ScimGroup,
  ScimGroupInput,
  ScimNotFound,
  ScimPayloadTooLarge,
  ScimPreconditionFailed,
  ScimRateLimited,
  ScimResourceType,
  ScimSchemaResource,
  ScimUnauthorized,
  ScimUnsupportedMediaType,
  ScimUser,
  ScimUserInput,
  SearchRequest,
  ServiceProviderConfig
} from "./Scim.ts"

/** One schema for every 403: the middleware's (no `scim` scope) and a user write's (the key's owner may not). */
const forbidden = ScimForbidden.pipe(asScim)

/** API-key authentication for SCIM, answering in SCIM's own error schema; needs the `scim` scope. */
export class ScimAuth extends HttpApiMiddleware.Service<ScimAuth, { provides: CurrentPrincipal }>()(
  "@agent-platform/domain/Scim/ScimAuth",
  {
    security: { apiKey: apiKeySecurity },
    error: [ScimUnauthorized.pipe(asScim), forbidden, ScimRateLimited.pipe(asScim)]
  }
) {}

const badRequest = ScimBadRequest.pipe(asScim)
const notFound = ScimNotFound.pipe(asScim)
const conflict = ScimConflict.pipe(asScim)
const preconditionFailed = ScimPreconditionFailed.pipe(asScim)
/**
 * What the HTTP edge answers, in SCIM's error schema, before an endpoint that
 * reads a body runs: declared here so the document says `application/scim+json`
 * (the contract-wide 413 and 415 are `application/json`).
 */
const bodyRefusals = [ScimPayloadTooLarge.pipe(asScim), ScimUnsupportedMediaType.pipe(asScim)] as const
const id = { id: Schema.String }

/** The resource's version, the same as `meta.version`. */
const etag = { etag: Schema.String }
/** A resource answered with its ETag. */
const resource = <S extends Schema.Top>(schema: S) => HttpApiSchema.WithHeaders(schema.pipe(asScim), etag)
/** A created resource: 201 with its ETag and Location. */
const created = <S extends Schema.Top>(schema: S) =>
  HttpApiSchema.WithHeaders(schema.pipe(asScim, HttpApiSchema.status(201)), { ...etag, location: Schema.String })

const userList = listResponse(ScimUser, "ScimUserList", examples.user).pipe(asScim)
const groupList = listResponse(ScimGroup, "ScimGroupList", examples.group).pipe(asScim)
const searchPayload = [SearchRequest.pipe(asScim), SearchRequest] as const
const search =
  "The same query as the list's GET, sent as a SearchRequest body (RFC 7644 §3.4.3): `attributes` and `excludedAttributes` are arrays, `startIndex` and `count` integers; `schemas`, when given, must name `urn:ietf:params:scim:api:messages:2.0:SearchRequest` (else 400 invalidSyntax). A search across resource types (`POST /v1/scim/.search`), `/Me` and `/Bulk` answer 501."

const ifMatch = "With `If-Match`, a stale version answers 412."
const ownerRule =
  "A key acts with its owner's authority: 403 when the owner's role may not change a user holding the user's role (an r_admin's key cannot change an r_superadmin), as on the admin surface."
const userWrites =
  "`active` accepts `\"True\"`/`\"False\"`; a `password` is checked against the tenant's password policy and never returned. Unknown attributes and extension schemas are ignored."

/** SCIM 2.0 provisioning (`/v1/scim`, also `/api/v1/scim`): Users, Groups and the discovery resources. */
export class ScimApi extends HttpApiGroup.make("scim")
  .add(
    HttpApiEndpoint.get("listUsers", "/Users", {
      query: ListQuery,
      success: userList,
      error: [badRequest]
    }).annotateMerge(doc(
      "List users",
      "The tenant's users (the same as on the admin surface), filtered, sorted and paged: `totalResults` counts every match, `startIndex` echoes the 1-based index, `itemsPerPage` is the number of `Resources` returned. Okta and Entra look users up with `userName eq \"...\"` and `externalId eq \"...\"`."
    )),
    HttpApiEndpoint.post("searchUsers", "/Users/.search", {
      payload: searchPayload,
      success: userList,
      error: [badRequest, ...bodyRefusals]
    }).annotateMerge(doc("Search users", search)),
    HttpApiEndpoint.post("createUser", "/Users", {
      query: ProjectionQuery,
      payload: [ScimUserInput.pipe(asScim), ScimUserInput],
      success: created(ScimUser),
      error: [badRequest, conflict, ...bodyRefusals]
    }).annotateMerge(doc(
      "Create a user",
      `Creates a user of the tenant (role r_user unless a role mapping grants another). 409 (uniqueness) when the userName or sign-in email is taken. Without a password the user cannot sign in until one is set. ${userWrites}`
    )),
    HttpApiEndpoint.get("getUser", "/Users/:id", {
      params: id,
      query: ProjectionQuery,
      success: resource(ScimUser),
      error: [badRequest, notFound]
    }).annotateMerge(doc("Read a user", "Answers the user with its ETag; another tenant's id answers 404.")),
    HttpApiEndpoint.put("replaceUser", "/Users/:id", {
      params: id,
      query: ProjectionQuery,
      headers: IfMatchHeaders,
      payload: [ScimUserInput.pipe(asScim), ScimUserInput],
      success: resource(ScimUser),
      error: [badRequest, forbidden, notFound, conflict, preconditionFailed, ...bodyRefusals]
    }).annotateMerge(doc(
      "Replace a user",
      `Full replacement: attributes left out are cleared. \`active: false\` deactivates the user (as Okta does), ending their sessions at once. ${ifMatch} ${ownerRule} ${userWrites}`
    )),
    HttpApiEndpoint.patch("patchUser", "/Users/:id", {
      params: id,
      query: ProjectionQuery,
      headers: IfMatchHeaders,
      payload: [PatchOp.pipe(asScim), PatchOp],
      success: resource(ScimUser),
      error: [badRequest, forbidden, notFound, conflict, preconditionFailed, ...bodyRefusals]
    }).annotateMerge(doc(
      "Update a user",
      `PatchOp add/replace/remove, with or without \`path\` (a value of dotted keys such as \`{"name.givenName": "X"}\` is accepted), ops in any case. \`replace\` with value \`{active: false}\` deactivates the user and ends their sessions; \`true\` lets them sign in again. ${ifMatch} ${ownerRule}`
    )),
    HttpApiEndpoint.delete("deleteUser", "/Users/:id", {
      params: id,
      headers: IfMatchHeaders,
      success: HttpApiSchema.NoContent,
      error: [badRequest, forbidden, notFound, preconditionFailed]
    }).annotateMerge(doc(
      "Delete a user",
      `Deletes the user: their sessions end, they leave their groups, and the id answers 404 from then on. The key's own owner cannot be deleted or deactivated through it, as the key would stop with them, nor the tenant's last active administrator (400 mutability). ${ifMatch} ${ownerRule}`
    )),
    HttpApiEndpoint.get("listGroups", "/Groups", {
      query: ListQuery,
      success: groupList,
      error: [badRequest]
    }).annotateMerge(doc(
      "List groups",
      "Filter on displayName, externalId, id or members.value; `excludedAttributes=members` leaves members out (as Okta and Entra ask)."
    )),
    HttpApiEndpoint.post("searchGroups", "/Groups/.search", {
      payload: searchPayload,
      success: groupList,
      error: [badRequest, ...bodyRefusals]
    }).annotateMerge(doc("Search groups", search)),
    HttpApiEndpoint.post("createGroup", "/Groups", {
      query: ProjectionQuery,
      payload: [ScimGroupInput.pipe(asScim), ScimGroupInput],
      success: created(ScimGroup),
      error: [badRequest, conflict, ...bodyRefusals]
    }).annotateMerge(doc(
      "Create a group",
      "409 (uniqueness) when the displayName is taken in the tenant; a member id that is not a user of the tenant answers 400 (invalidValue). Role mappings apply to its members at once."
    )),
    HttpApiEndpoint.get("getGroup", "/Groups/:id", {
      params: id,
      query: ProjectionQuery,
      success: resource(ScimGroup),
      error: [badRequest, notFound]
    }).annotateMerge(
      doc(
        "Read a group",
        "Answers the group with its ETag; `excludedAttributes=members` leaves the members out. Another tenant's id answers 404."
      )
    ),
    HttpApiEndpoint.put("replaceGroup", "/Groups/:id", {
      params: id,
      query: ProjectionQuery,
      headers: IfMatchHeaders,
      payload: [ScimGroupInput.pipe(asScim), ScimGroupInput],
      success: resource(ScimGroup),
      error: [badRequest, notFound, conflict, preconditionFailed, ...bodyRefusals]
    }).annotateMerge(
      doc("Replace a group", `Replaces the displayName, externalId and the whole member list. ${ifMatch}`)
    ),
    HttpApiEndpoint.patch("patchGroup", "/Groups/:id", {
      params: id,
      query: ProjectionQuery,
      headers: IfMatchHeaders,
      payload: [PatchOp.pipe(asScim), PatchOp],
      success: resource(ScimGroup),
      error: [badRequest, notFound, conflict, preconditionFailed, ...bodyRefusals]
    }).annotateMerge(doc(
      "Update a group",
      `\`add\` with path \`members\` and value \`[{value}]\` adds members; \`remove\` with path \`members[value eq "<id>"]\` removes one, with path \`members\` and a value list removes those (Entra), without a value removes all; \`replace\` of \`displayName\` (with or without path) renames. Role mappings are applied to every member whose membership changed. ${ifMatch}`
    )),
    HttpApiEndpoint.delete("deleteGroup", "/Groups/:id", {
      params: id,
      headers: IfMatchHeaders,
      success: HttpApiSchema.NoContent,
      error: [notFound, preconditionFailed]
    }).annotateMerge(
      doc("Delete a group", `Its former members' roles are recomputed from the remaining role mappings. ${ifMatch}`)
    ),
    HttpApiEndpoint.get("getServiceProviderConfig", "/ServiceProviderConfig", {
      success: ServiceProviderConfig.pipe(asScim)
    }).annotateMerge(doc(
      "Service provider configuration",
      "RFC 7644 §4: PATCH, filter (maxResults 1000), sort, ETags and changePassword (a `password` in POST, PUT or PATCH) supported; bulk not; OAuth bearer token (the API key) authentication."
    )),
    HttpApiEndpoint.get("listSchemas", "/Schemas", {
      success: listResponse(ScimSchemaResource, "ScimSchemaList", examples.schema).pipe(asScim)
    }).annotateMerge(
      doc("Supported schemas", "User, Enterprise User extension and Group, with every attribute's characteristics.")
    ),
    HttpApiEndpoint.get("getSchema", "/Schemas/:id", {
      params: id,
      success: ScimSchemaResource.pipe(asScim),
      error: [notFound]
    }).annotateMerge(doc("Read a schema", "By its URN, e.g. `urn:ietf:params:scim:schemas:core:2.0:User`.")),
    HttpApiEndpoint.get("listResourceTypes", "/ResourceTypes", {
      success: listResponse(ScimResourceType, "ScimResourceTypeList", examples.resourceType).pipe(asScim)
    }).annotateMerge(doc("Supported resource types", "User (with the Enterprise User extension) and Group.")),
    HttpApiEndpoint.get("getResourceType", "/ResourceTypes/:id", {
      params: id,
      success: ScimResourceType.pipe(asScim),
      error: [notFound]
    }).annotateMerge(doc("Read a resource type", "`User` or `Group`."))
  )
  .annotateEndpoints(RequiredScopes, ["scim"])
  .middleware(ScimAuth)
  .prefix("/v1/scim")
  .annotateMerge(OpenApi.annotations({
    title: "SCIM 2.0",
    description:
      "Provisioning from Okta, Microsoft Entra ID and other identity providers (RFC 7643/7644), with an API key holding the `scim` scope. Every error, including 401, 403, 404, 405, 413, 415 and 429, is a SCIM Error in application/scim+json. What RFC 7644 defines and this service does not provide answers 501: `/Me`, `/Bulk` and a search across resource types (`POST /v1/scim/.search`)."
  }))
{}
