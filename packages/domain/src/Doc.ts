/** OpenAPI documentation shorthands shared by the groups. */
import * as OpenApi from "effect/http-api/OpenApi"

/** A summary and an optional description for an endpoint. */
export const doc = (summary: string, description?: string) =>
  OpenApi.annotations(description === undefined ? { summary } : { summary, description })
