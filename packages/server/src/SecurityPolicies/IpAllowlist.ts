/**
 * The tenant's IP allowlist: CIDR rules (IPv4 and IPv6) that sign-ins and
 * session requests must come from. No rules means every address is allowed.
 */
import { Context, Effect, Layer, Result } from "effect"
import * as IpNetwork from "effect/net/IpNetwork"
import type * as NetAddress from "effect/net/NetAddress"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { isUuid } from "../Platform/Ids.ts"

export interface IpRuleRow {
  readonly id: string
  readonly cidr: string
  readonly description: string | null
  readonly created_at: Date
}

/** Parses a CIDR, or a bare address as a single-host network; undefined when invalid. */
export const parseCidr = (input: string): IpNetwork.IpNetwork | undefined => {
  const trimmed = input.trim()
  const withPrefix = trimmed.includes("/") ? trimmed : `${trimmed}/${trimmed.includes(":") ? 128 : 32}`
  const result = IpNetwork.fromString(withPrefix)
  return Result.isSuccess(result) ? result.success : undefined
}

/** Whether `ip` is allowed by `rules` (no rules: everything is). An unknown IP is allowed only without rules. */
export const allows = (rules: ReadonlyArray<string>, ip: NetAddress.IpAddress | undefined): boolean => {
  if (rules.length === 0) return true
  if (ip === undefined) return false
  return rules.some((cidr) => {
    const network = parseCidr(cidr)
    return network !== undefined && IpNetwork.contains(network, ip)
  })
}

/** The first key of the allowlist changes' advisory locks (the second is the tenant's). */
const allowlistLockClass = 13_000_029

export class IpAllowlist extends Context.Service<IpAllowlist, {
  readonly list: (tenantId: string) => Effect.Effect<ReadonlyArray<IpRuleRow>, SqlError>
  /**
   * Runs a change of the tenant's rules decided on the rules as they are, in
   * one transaction that holds the tenant's allowlist lock: two changes at
   * once are decided one after the other (two removals that each leave the
   * administrator's address covered by the other's rule cannot both go
   * through and lock them out).
   */
  readonly changing: <A, E, R>(
    tenantId: string,
    change: (rules: ReadonlyArray<IpRuleRow>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | SqlError, R>
  /** Undefined when the same CIDR is already listed. */
  readonly add: (
    tenantId: string,
    rule: { readonly cidr: string; readonly description: string | null; readonly createdBy: string }
  ) => Effect.Effect<IpRuleRow | undefined, SqlError>
  readonly remove: (tenantId: string, id: string) => Effect.Effect<IpRuleRow | undefined, SqlError>
  readonly isAllowed: (tenantId: string, ip: NetAddress.IpAddress | undefined) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/SecurityPolicies/IpAllowlist") {
  static readonly layer = Layer.effect(
    IpAllowlist,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const list = (tenantId: string) =>
        sql<
          IpRuleRow
        >`SELECT id, cidr, description, created_at FROM ip_allowlist WHERE tenant_id = ${tenantId} ORDER BY created_at`
      return IpAllowlist.of({
        list,
        changing: (tenantId, change) =>
          sql.withTransaction(
            sql`SELECT pg_advisory_xact_lock(${allowlistLockClass}, hashtext(${tenantId}))`.pipe(
              Effect.andThen(list(tenantId)),
              Effect.flatMap(change)
            )
          ),
        add: (tenantId, rule) =>
          Effect.map(
            sql<IpRuleRow>`
              INSERT INTO ip_allowlist (tenant_id, cidr, description, created_by)
              VALUES (${tenantId}, ${rule.cidr}, ${rule.description}, ${rule.createdBy})
              ON CONFLICT (tenant_id, cidr) DO NOTHING
              RETURNING id, cidr, description, created_at`,
            (rows) => rows[0]
          ),
        remove: (tenantId, id) =>
          isUuid(id)
            ? Effect.map(
              sql<IpRuleRow>`DELETE FROM ip_allowlist WHERE tenant_id = ${tenantId} AND id = ${id}
                RETURNING id, cidr, description, created_at`,
              (rows) => rows[0]
            )
            : Effect.succeed(undefined),
        isAllowed: (tenantId, ip) => Effect.map(list(tenantId), (rules) => allows(rules.map((rule) => rule.cidr), ip))
      })
    })
  )
}
