/**
 * The query of a SCIM list (RFC 7644 §3.4.2): the filter as SQL, the sort
 * key and the page. Out-of-range numbers follow the RFC (startIndex below 1
 * is 1, a negative count is 0) and a count above 1000 is lowered to 1000;
 * what is not a number is a 400 invalidValue.
 */
import { Scim } from "@agent-platform/domain"
import { Effect } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import type { Projection } from "./ScimAttributes.ts"
import { type FieldTable, InvalidFilter, sortKey, toSql } from "./ScimFilter.ts"

export interface ListParams {
  readonly filter?: string | undefined
  readonly startIndex?: string | undefined
  readonly count?: string | undefined
  readonly sortBy?: string | undefined
  readonly sortOrder?: string | undefined
}

export interface Page {
  readonly where: Statement.Fragment | undefined
  readonly orderBy: { readonly expr: Statement.Fragment; readonly descending: boolean } | undefined
  readonly startIndex: number
  readonly offset: number
  readonly limit: number
}

const largest = 2_147_483_647

const integer = (name: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
  if (raw === undefined || raw.trim() === "") return fallback
  if (!/^[+-]?\d+$/.test(raw.trim())) {
    throw new InvalidFilter(`${name} must be an integer, got ${JSON.stringify(raw)}.`, "invalidValue")
  }
  return Math.min(max, Math.max(min, Number(raw.trim())))
}

/** The page a list query asks for, or the SCIM 400 it deserves. */
export const readPage = (
  sql: SqlClient.SqlClient,
  fields: FieldTable,
  params: ListParams
): Effect.Effect<Page, Scim.ScimBadRequest> =>
  Effect.try({
    try: (): Page => {
      const startIndex = integer("startIndex", params.startIndex, 1, 1, largest)
      const limit = integer("count", params.count, Scim.defaultCount, 0, Scim.maxResults)
      const order = params.sortOrder?.trim().toLowerCase()
      if (order !== undefined && order !== "" && order !== "ascending" && order !== "descending") {
        throw new InvalidFilter(
          `sortOrder must be ascending or descending, got ${JSON.stringify(params.sortOrder)}.`,
          "invalidValue"
        )
      }
      const filter = params.filter?.trim()
      return {
        where: filter === undefined || filter === "" ? undefined : toSql(sql, fields, filter),
        orderBy: params.sortBy === undefined || params.sortBy.trim() === ""
          ? undefined
          : { expr: sortKey(fields, params.sortBy.trim()).expr, descending: order === "descending" },
        startIndex,
        offset: startIndex - 1,
        limit
      }
    },
    catch: (error) => {
      if (error instanceof InvalidFilter) return error.toScim()
      throw error
    }
  })

/** A ListResponse (RFC 7644 §3.4.2): totalResults counts every match, itemsPerPage the resources returned. */
export const listResponse = <A>(startIndex: number, total: number, resources: ReadonlyArray<A>) => ({
  schemas: [Scim.ListResponseUrn],
  totalResults: total,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources
})

/** A unique constraint a write broke, as the SCIM 409 that names it; other failures pass through. */
export const uniqueness = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  describe: (constraint: string) => string
): Effect.Effect<A, E | Scim.ScimConflict, R> =>
  Effect.catch(self, (error): Effect.Effect<never, E | Scim.ScimConflict> => {
    const failure = error as {
      readonly _tag?: unknown
      readonly reason?: {
        readonly cause?: { readonly code?: unknown; readonly constraint?: unknown; readonly message?: unknown }
      }
    }
    const cause = failure._tag === "SqlError" ? failure.reason?.cause : undefined
    if (cause?.code !== "23505") return Effect.fail(error)
    const constraint = typeof cause.constraint === "string"
      ? cause.constraint
      : /"([^"]+)"/.exec(typeof cause.message === "string" ? cause.message : "")?.[1] ?? ""
    return Effect.fail(Scim.ScimConflict.of(describe(constraint)))
  })

/**
 * A SearchRequest body (`POST /Users/.search`) as the list query of a GET:
 * numbers as text, attribute lists comma-separated. A `schemas` that does not
 * name the SearchRequest URN is a 400 invalidSyntax (RFC 7644 §3.4.3).
 */
export const fromSearchRequest = (
  request: typeof Scim.SearchRequest.Type
): Effect.Effect<ListParams & Projection, Scim.ScimBadRequest> =>
  request.schemas !== undefined && !request.schemas.includes(Scim.SearchRequestUrn)
    ? Effect.fail(Scim.ScimBadRequest.of(
      "invalidSyntax",
      `A search body's schemas must be ["${Scim.SearchRequestUrn}"], got ${JSON.stringify(request.schemas)}.`
    ))
    : Effect.succeed({
      filter: request.filter,
      startIndex: request.startIndex === undefined ? undefined : String(request.startIndex),
      count: request.count === undefined ? undefined : String(request.count),
      sortBy: request.sortBy,
      sortOrder: request.sortOrder,
      attributes: request.attributes?.join(","),
      excludedAttributes: request.excludedAttributes?.join(",")
    })
