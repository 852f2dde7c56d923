/**
 * A space named the way the API lets callers name one: by its id or by its
 * code, within a tenant. One query for every endpoint that takes such a name
 * (chat completions' `space`, the conversation export's `group_id`).
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { isUuid } from "../Platform/Ids.ts"

export interface SpaceRow {
  readonly id: string
  readonly code: string
}

/** The tenant's space whose id or code is `ref` (none, or one row); a ref that is no UUID is only a code. */
export const selectSpaceByRef = (sql: SqlClient.SqlClient, tenantId: string, ref: string) =>
  isUuid(ref)
    ? sql<SpaceRow>`SELECT id, code FROM spaces WHERE tenant_id = ${tenantId} AND (id = ${ref} OR code = ${ref})`
    : sql<SpaceRow>`SELECT id, code FROM spaces WHERE tenant_id = ${tenantId} AND code = ${ref}`
