/**
 * Group PATCH paths that pick members by a filter, `members[display eq "Ada"]`
 * (RFC 7644 §3.5.2): the filter is run here, by scim2-parse-filter's
 * evaluator, against the members as a Group returns them (`value`,
 * `display`, `type`), strings compared case-insensitively, and the operation is then applied by member id — the
 * patched document holds the members' ids alone, so that a removal by value
 * list (Entra) matches however the provider wrote them. A filter on anything
 * else is a 400 invalidFilter, never an operation that silently does nothing.
 * A removal whose filter matches no member changes nothing (Okta removes a
 * member that may already be gone).
 */
import { Scim, ScimSchemas } from "@agent-platform/domain"
import type { ScimPatchOperation } from "scim-patch"
import { type Filter, Tester } from "scim2-parse-filter"
import { closingBracketPositions, InvalidFilter, parseFilter } from "./ScimFilter.ts"

/** A member as a Group returns it. */
export type Member = Readonly<Record<string, unknown>> & { readonly value: string }

/**
 * The sub-attributes a member filter may name: those a Group returns for each
 * member, but `$ref`, which the filter grammar's attribute names cannot spell
 * (RFC 7644 §3.4.2.2: ALPHA first).
 */
const filterable = ["value", "display", "type"]

/** `members[<filter>]<rest>` → the filter and the rest (`""`, `.value`); undefined for any other path. */
const splitMemberPath = (path: string): { readonly filter: string; readonly rest: string } | undefined => {
  const prefix = `${ScimSchemas.GroupSchemaUrn.toLowerCase()}:`
  const bare = path.trim().toLowerCase().startsWith(prefix) ? path.trim().slice(prefix.length) : path.trim()
  if (!bare.toLowerCase().startsWith("members[")) return undefined
  const close = closingBracketPositions(bare)[0]
  if (close !== undefined) return { filter: bare.slice("members[".length, close), rest: bare.slice(close + 1) }
  throw new InvalidFilter(`Invalid path ${path}: the member filter has no closing ].`)
}

const fold = <A>(value: A): A => (typeof value === "string" ? value.toLowerCase() as A : value)

/**
 * scim2-parse-filter's evaluator, comparing lower-cased strings: a member's
 * `value`, `display` and `type` are not case-exact (RFC 7643 §8.7.1), and
 * the filters it is given have their values lower-cased by {@link prepare}.
 */
class MemberTester extends Tester {
  override attrTest(path: Array<string>, r: unknown, op: (r: unknown) => boolean): boolean {
    return path.length === 0 ? op(fold(r)) : super.attrTest(path, r, op)
  }
}

const tester = new MemberTester()

/**
 * The filter, its values lower-cased for {@link MemberTester}; refuses
 * (InvalidFilter) one naming what members do not have, in any branch.
 */
const prepare = (filter: Filter, text: string): Filter => {
  switch (filter.op) {
    case "and":
    case "or":
      return { ...filter, filters: filter.filters.map((child) => prepare(child, text)) }
    case "not":
      return { ...filter, filter: prepare(filter.filter, text) }
    case "[]":
      throw new InvalidFilter(`Invalid member filter ${JSON.stringify(text)}: a member has no multi-valued attribute.`)
    default:
      if (!filterable.includes(filter.attrPath.toLowerCase())) {
        throw new InvalidFilter(
          `Invalid member filter ${JSON.stringify(text)}: members have no ${filter.attrPath}; filter on ${
            filterable.join(", ")
          }.`
        )
      }
      return filter.op === "pr" ? filter : { ...filter, compValue: fold(filter.compValue) }
  }
}

/** The ids of the members a filter selects. */
const selectMembers = (members: ReadonlyArray<Member>, text: string): ReadonlyArray<string> => {
  const filter = prepare(parseFilter(text), text)
  return members.filter((member) => tester.test(member, filter)).map((member) => member.value)
}

const byIds = (ids: ReadonlyArray<string>) => ids.map((id) => `value eq ${JSON.stringify(id)}`).join(" or ")

/** One operation with its member filter resolved to ids; undefined when it changes nothing. */
const resolve = (
  operation: ScimPatchOperation,
  members: ReadonlyArray<Member>
): ScimPatchOperation | undefined | Scim.ScimBadRequest => {
  const split = operation.path === undefined ? undefined : splitMemberPath(operation.path)
  if (split === undefined) return operation
  const ids = selectMembers(members, split.filter)
  if (operation.op === "remove") {
    if (ids.length === 0) return undefined
    if (split.rest === "") return { op: "remove", path: "members", value: ids.map((value) => ({ value })) }
  }
  if (ids.length === 0) return Scim.ScimBadRequest.of("noTarget", `${operation.path} matches no member of the group.`)
  return { ...operation, path: `members[${byIds(ids)}]${split.rest}` } as ScimPatchOperation
}

/**
 * The operations with every member filter resolved against the group's
 * current members, or the SCIM 400 for a filter that cannot be run.
 */
export const resolveMemberFilters = (
  operations: ReadonlyArray<ScimPatchOperation>,
  members: ReadonlyArray<Member>
): Array<ScimPatchOperation> | Scim.ScimBadRequest => {
  const result: Array<ScimPatchOperation> = []
  try {
    for (const operation of operations) {
      const resolved = resolve(operation, members)
      if (resolved instanceof Scim.ScimBadRequest) return resolved
      if (resolved !== undefined) result.push(resolved)
    }
  } catch (error) {
    if (error instanceof InvalidFilter) return error.toScim()
    throw error
  }
  return result
}
