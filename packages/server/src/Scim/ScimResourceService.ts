/**
 * What every SCIM resource service (Users, Groups) offers and the plumbing
 * they share: the caller, the operations of RFC 7644 §3.3-3.6, the 404 for a
 * missing resource, the If-Match check and the list page.
 */
import { type Role, Scim } from "@agent-platform/domain"
import { Effect } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Projection } from "./ScimAttributes.ts"
import type { FieldTable } from "./ScimFilter.ts"
import { type ListParams, listResponse, type Page, readPage } from "./ScimListing.ts"
import { ifMatchAllows } from "./ScimResources.ts"

/** Who calls, for which tenant, and where the resources live. */
export interface ScimCaller {
  readonly tenantId: string
  readonly keyId: string
  /** The role of the key's owner: the key changes only the users its owner could (KeyPrincipal). */
  readonly ownerRole: Role
  /** The key's owner, whom the key cannot deactivate or delete (it would stop itself). */
  readonly ownerId: string
  /** `http(s)://host/v1/scim`, for `meta.location` and `$ref`. */
  readonly baseUrl: string
}

/** A resource as answered, with the version its ETag carries. */
export interface Versioned<A> {
  readonly resource: A
  readonly version: string
}

/** What a replacement or a patch can fail with. */
export type WriteError =
  | Scim.ScimBadRequest
  | Scim.ScimNotFound
  | Scim.ScimConflict
  | Scim.ScimPreconditionFailed
  | SqlError

/**
 * A write to an existing resource, conditional on If-Match, answering the
 * resource as it is after; `E` is what the resource adds to {@link WriteError}.
 */
export type Rewrite<A, E = never> = (
  caller: ScimCaller,
  id: string,
  body: Record<string, unknown>,
  ifMatch: string | undefined,
  projection: Projection
) => Effect.Effect<Versioned<A>, WriteError | E>

/**
 * The operations of a SCIM resource endpoint for resources `A`; `RemoveError`
 * is what a deletion may add, `RewriteError` what a replacement or a patch may.
 */
export interface ScimResourceService<A, RemoveError = never, RewriteError = never> {
  readonly list: (
    caller: ScimCaller,
    params: ListParams & Projection
  ) => Effect.Effect<ReturnType<typeof listResponse<A>>, Scim.ScimBadRequest | SqlError>
  readonly get: (
    caller: ScimCaller,
    id: string,
    projection: Projection
  ) => Effect.Effect<Versioned<A>, Scim.ScimNotFound | SqlError>
  readonly create: (
    caller: ScimCaller,
    body: Record<string, unknown>,
    projection: Projection
  ) => Effect.Effect<Versioned<A>, Scim.ScimBadRequest | Scim.ScimConflict | SqlError>
  /** PUT: the body replaces the resource. */
  readonly replace: Rewrite<A, RewriteError>
  /** PATCH: the body's operations change the resource. */
  readonly patch: Rewrite<A, RewriteError>
  readonly remove: (
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined
  ) => Effect.Effect<void, RemoveError | Scim.ScimNotFound | Scim.ScimPreconditionFailed | SqlError>
}

/** The row a repository found, or the SCIM 404 that names the missing resource (`User`, `Group`). */
export const foundOrNotFound = <Row, E, R>(
  resourceType: string,
  id: string,
  find: Effect.Effect<Row | undefined, E, R>
): Effect.Effect<Row, E | Scim.ScimNotFound, R> =>
  Effect.flatMap(
    find,
    (row) =>
      row === undefined ? Effect.fail(Scim.ScimNotFound.of(`${resourceType} ${id} not found.`)) : Effect.succeed(row)
  )

/** Fails with the SCIM 412 when the If-Match header does not name the resource's current version. */
export const checkIfMatch = (
  resourceType: string,
  id: string,
  ifMatch: string | undefined,
  version: string
): Effect.Effect<void, Scim.ScimPreconditionFailed> =>
  ifMatchAllows(ifMatch, version)
    ? Effect.void
    : Effect.fail(
      Scim.ScimPreconditionFailed.of(
        `${resourceType} ${id} has changed since version ${ifMatch}: read it again (its version is ${version}).`
      )
    )

/**
 * A ListResponse page: the page the query asks for, the rows the repository
 * reads for it, each shown as the resource the caller projected.
 */
export const listPage = <Row, A, E, R>(
  sql: SqlClient.SqlClient,
  fields: FieldTable,
  params: ListParams,
  read: (page: Page) => Effect.Effect<{ readonly total: number; readonly rows: ReadonlyArray<Row> }, E, R>,
  show: (row: Row) => A
): Effect.Effect<ReturnType<typeof listResponse<A>>, Scim.ScimBadRequest | E, R> =>
  Effect.gen(function*() {
    const page = yield* readPage(sql, fields, params)
    const { rows, total } = yield* read(page)
    return listResponse(page.startIndex, total, rows.map(show))
  })
