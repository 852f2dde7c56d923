/** The SCIM handlers (`/v1/scim`) and the role-mapping handlers (`/api/admin/scim`). */
import { Api, type CurrentPrincipal, Scim } from "@agent-platform/domain"
import { Effect, Layer } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { currentKey, currentUser } from "../Auth/CurrentUser.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import * as ScimDiscovery from "./ScimDiscovery.ts"
import { ScimGroups } from "./ScimGroups.ts"
import { ScimGroupsRepo } from "./ScimGroupsRepo.ts"
import { fromSearchRequest, listResponse } from "./ScimListing.ts"
import type { ScimCaller } from "./ScimResourceService.ts"
import { ScimRoleMappings } from "./ScimRoleMappings.ts"
import { ScimUsers } from "./ScimUsers.ts"
import { ScimUsersRepo } from "./ScimUsersRepo.ts"

/**
 * The SCIM base URL as the client reached it, for `meta.location` and `$ref`:
 * the Host header, and behind a trusted proxy its X-Forwarded-Proto/-Host.
 */
const baseUrl = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* ServerConfig
  const forwarded = (
    name: string
  ) => (config.trustedProxies > 0 ? request.headers[name]?.split(",")[0]?.trim() : undefined)
  const proto = forwarded("x-forwarded-proto") ?? "http"
  const host = forwarded("x-forwarded-host") ?? request.headers.host ?? "localhost"
  return `${proto === "https" ? "https" : "http"}://${host}/v1/scim`
})

const caller: Effect.Effect<ScimCaller, never, CurrentPrincipal | HttpServerRequest.HttpServerRequest | ServerConfig> =
  Effect.gen(function*() {
    const key = yield* currentKey
    return {
      tenantId: key.tenantId,
      keyId: key.keyId,
      ownerRole: key.ownerRole,
      ownerId: key.ownerId,
      baseUrl: yield* baseUrl
    }
  })

const withEtag = <A>(result: { readonly resource: A; readonly version: string }) =>
  HttpApiSchema.withHeaders({ body: result.resource, headers: { etag: result.version } })

const created = <A extends { readonly meta?: { readonly location: string } | undefined }>(
  result: { readonly resource: A; readonly version: string },
  location: string
) => HttpApiSchema.withHeaders({ body: result.resource, headers: { etag: result.version, location } })

export const ScimHttp = HttpApiBuilder.group(Api, "scim", (handlers) =>
  Effect.gen(function*() {
    const users = yield* ScimUsers
    const groups = yield* ScimGroups
    const config = yield* ServerConfig
    const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      orDieOnSql(effect).pipe(Effect.provideService(ServerConfig, config))
    return handlers
      .handle("listUsers", ({ query }) => run(Effect.flatMap(caller, (c) => users.list(c, query))))
      .handle("searchUsers", ({ payload }) =>
        run(Effect.flatMap(fromSearchRequest(payload), (query) =>
          Effect.flatMap(caller, (c) => users.list(c, query)))))
      .handle("createUser", ({ payload, query }) =>
        run(Effect.gen(function*() {
          const c = yield* caller
          const result = yield* users.create(c, payload, query)
          return created(result, `${c.baseUrl}/Users/${result.resource.id}`)
        })))
      .handle("getUser", ({ params, query }) =>
        run(Effect.map(
          Effect.flatMap(caller, (c) =>
            users.get(c, params.id, query)),
          withEtag
        )))
      .handle("replaceUser", ({ params, payload, headers, query }) =>
        run(Effect.map(
          Effect.flatMap(caller, (c) => users.replace(c, params.id, payload, headers["if-match"], query)),
          withEtag
        )))
      .handle("patchUser", ({ params, payload, headers, query }) =>
        run(Effect.map(
          Effect.flatMap(caller, (c) => users.patch(c, params.id, payload, headers["if-match"], query)),
          withEtag
        )))
      .handle("deleteUser", ({ params, headers }) =>
        run(Effect.flatMap(caller, (c) =>
          users.remove(c, params.id, headers["if-match"]))))
      .handle("listGroups", ({ query }) =>
        run(Effect.flatMap(caller, (c) => groups.list(c, query))))
      .handle("searchGroups", ({ payload }) =>
        run(Effect.flatMap(fromSearchRequest(payload), (query) =>
          Effect.flatMap(caller, (c) =>
            groups.list(c, query)))))
      .handle("createGroup", ({ payload, query }) =>
        run(Effect.gen(function*() {
          const c = yield* caller
          const result = yield* groups.create(c, payload, query)
          return created(result, `${c.baseUrl}/Groups/${result.resource.id}`)
        })))
      .handle("getGroup", ({ params, query }) =>
        run(Effect.map(
          Effect.flatMap(caller, (c) =>
            groups.get(c, params.id, query)),
          withEtag
        )))
      .handle("replaceGroup", ({ params, payload, headers, query }) =>
        run(Effect.map(
          Effect.flatMap(caller, (c) => groups.replace(c, params.id, payload, headers["if-match"], query)),
          withEtag
        )))
      .handle("patchGroup", ({ params, payload, headers, query }) =>
        run(Effect.map(
          Effect.flatMap(caller, (c) => groups.patch(c, params.id, payload, headers["if-match"], query)),
          withEtag
        )))
      .handle("deleteGroup", ({ params, headers }) =>
        run(Effect.flatMap(caller, (c) =>
          groups.remove(c, params.id, headers["if-match"]))))
      .handle("getServiceProviderConfig", () =>
        run(Effect.map(baseUrl, ScimDiscovery.serviceProviderConfig)))
      .handle("listSchemas", () =>
        run(Effect.map(baseUrl, (base) => {
          const all = ScimDiscovery.schemas(base)
          return listResponse(1, all.length, all)
        })))
      .handle("getSchema", ({ params }) =>
        run(Effect.flatMap(baseUrl, (base) => {
          const schema = ScimDiscovery.findSchema(params.id, base)
          return schema === undefined
            ? Effect.fail(Scim.ScimNotFound.of(`No schema ${params.id}: see /v1/scim/Schemas.`))
            : Effect.succeed(schema)
        })))
      .handle("listResourceTypes", () =>
        run(Effect.map(baseUrl, (base) => {
          const all = ScimDiscovery.resourceTypes(base)
          return listResponse(1, all.length, all)
        })))
      .handle("getResourceType", ({ params }) =>
        run(Effect.flatMap(baseUrl, (base) => {
          const type = ScimDiscovery.resourceTypes(base).find((candidate) =>
            candidate.id.toLowerCase() === params.id.toLowerCase()
          )
          return type === undefined
            ? Effect.fail(Scim.ScimNotFound.of(`No resource type ${params.id}: User or Group.`))
            : Effect.succeed(type)
        })))
  }))

export const ScimRoleMappingsHttp = HttpApiBuilder.group(Api, "scimRoleMappings", (handlers) =>
  Effect.gen(function*() {
    const mappings = yield* ScimRoleMappings
    return handlers
      .handle("get", () => Effect.flatMap(currentUser, (actor) => mappings.get(actor.tenantId)).pipe(orDieOnSql))
      .handle("put", ({ payload }) =>
        Effect.flatMap(currentUser, (actor) => mappings.put(actor, payload)).pipe(orDieOnSql))
  }))

/** The SCIM services: users, groups, role mappings and their repositories. */
export const ScimLive = Layer.mergeAll(ScimUsers.layer, ScimGroups.layer).pipe(
  Layer.provideMerge(ScimRoleMappings.layer),
  Layer.provideMerge(Layer.mergeAll(ScimUsersRepo.layer, ScimGroupsRepo.layer))
)
