/**
 * SCIM filters (RFC 7644 §3.4.2.2) as SQL. `scim2-parse-filter` parses the
 * whole grammar (eq ne co sw ew pr gt ge lt le, and/or/not, grouping, value
 * paths); the tree is translated to a SQL condition in which every compared
 * value is a bound parameter and every attribute is looked up in the
 * resource's field table (an unknown attribute is a 400 `invalidFilter`, so
 * no text of the filter ever becomes SQL). `co`, `sw` and `ew` use `strpos`,
 * `starts_with` and `right`, so `%` and `_` in a value match themselves.
 *
 * Semantics: strings compare case-insensitively unless the attribute is
 * caseExact (id, externalId); a comparison with an unassigned attribute is
 * false (and `ne` true), so `not` never turns "unknown" into a match; a
 * comparison on a multi-valued attribute matches when any value does;
 * `emails[type eq "work"].value eq "x"` needs one email that is both.
 */
import { Scim, type ScimSchemas } from "@agent-platform/domain"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { type Compare, type Filter, parse, type Suffix, type ValuePath } from "scim2-parse-filter"
import { parseDateTime } from "./ScimDateTime.ts"

type Fragment = Statement.Fragment
type Sql = SqlClient.SqlClient

/** A single-valued attribute: a SQL expression of it, as text (booleans as 'true'/'false') or timestamptz. */
export interface ScalarField {
  readonly _tag: "Scalar"
  readonly type: ScimSchemas.AttributeType
  readonly caseExact: boolean
  readonly expr: Fragment
}

/** A multi-valued attribute: its values as rows, each with fields of its own. */
export interface MultiField {
  readonly _tag: "Multi"
  /** `EXISTS (SELECT 1 FROM <values as alias> WHERE <condition>)`. */
  readonly exists: (alias: string, condition: Fragment) => Fragment
  /** A sub-attribute of one value (`value`, `type`, `primary`, ...). */
  readonly sub: (alias: string, name: string) => ScalarField | undefined
  /** The sub-attribute a comparison on the attribute itself means (RFC 7644 §3.4.2.2: `value`). */
  readonly defaultSub: string
}

export type Field = ScalarField | MultiField

/** The filterable attributes of a resource type: a path (`userName`, `name.givenName`, `emails`) to its field. */
export interface FieldTable {
  readonly resolve: (path: string) => Field | undefined
}

/** A filter that cannot be run: a 400 with `scimType` invalidFilter (or tooMany). */
export class InvalidFilter extends Error {
  constructor(
    readonly detail: string,
    readonly scimType: "invalidFilter" | "invalidValue" | "tooMany" = "invalidFilter"
  ) {
    super(detail)
  }
  toScim() {
    return Scim.ScimBadRequest.of(this.scimType, this.detail)
  }
}

/** Longest filter accepted, and most comparisons in one. */
export const maxFilterLength = 4096
export const maxFilterComparisons = 64

/** The positions of the `]` of a filter or path outside its quoted strings (an escaped `\"` inside one does not end it). */
export const closingBracketPositions = (text: string): Array<number> => {
  const positions: Array<number> = []
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted) {
      if (char === "\\") i++
      else if (char === "\"") quoted = false
    } else if (char === "\"") {
      quoted = true
    } else if (char === "]") {
      positions.push(i)
    }
  }
  return positions
}

/**
 * For each `]` of the filter outside quoted strings, whether a `.` follows:
 * `emails[type eq "work"].value eq "x"` is parsed by the package as
 * `emails[type eq "work"] and emails.value eq "x"`, which must then be read
 * as one value path (a work email whose value is x).
 */
const closingBrackets = (filter: string): Array<boolean> =>
  closingBracketPositions(filter).map((i) => filter[i + 1] === ".")

const countComparisons = (filter: Filter): number => {
  switch (filter.op) {
    case "and":
    case "or":
      return filter.filters.reduce((sum, child) => sum + countComparisons(child), 0)
    case "not":
      return countComparisons(filter.filter)
    case "[]":
      return 1 + countComparisons(filter.valFilter)
    default:
      return 1
  }
}

/** Parses a filter; a syntax error is a 400 invalidFilter that quotes the parser. */
export const parseFilter = (text: string): Filter => {
  if (text.length > maxFilterLength) {
    throw new InvalidFilter(`The filter is longer than ${maxFilterLength} characters.`, "tooMany")
  }
  let parsed: Filter
  try {
    parsed = parse(text)
  } catch (error) {
    // The parser names the end of the text `(EOT)` and says "is not json" of a token where a value belongs.
    const reason = (error instanceof Error ? error.message : String(error))
      .replace("[(EOT)] is not json", "the filter ends where a value belongs")
      .replace(
        /\[(.*?)(?:\(\w+\))?\] is not json/,
        "$1 is not a value (a string in double quotes, a number, true, false or null)"
      )
      .replace(/\[\(EOT\)\]|\s*\(EOT\)/g, " the end of the filter")
      .replace(/\s+/g, " ")
      .trim()
    throw new InvalidFilter(
      `Invalid filter ${
        JSON.stringify(text)
      }: ${reason}. Write each comparison as attribute, operator and value, e.g. userName eq "ada@example.com".`
    )
  }
  if (countComparisons(parsed) > maxFilterComparisons) {
    throw new InvalidFilter(`The filter has more than ${maxFilterComparisons} comparisons: split the query.`, "tooMany")
  }
  return parsed
}

const describe = (value: unknown) => JSON.stringify(value)

const isComparison = (filter: Filter): filter is Compare | Suffix =>
  filter.op !== "and" && filter.op !== "or" && filter.op !== "not" && filter.op !== "[]"

/** A comparison of one scalar field with a value, as a condition that is never NULL. */
const compare = (sql: Sql, field: ScalarField, op: string, value: unknown, attribute: string): Fragment => {
  const bad = (why: string) => new InvalidFilter(`Invalid filter on ${attribute}: ${why}.`)
  if (op === "pr") {
    return field.type === "dateTime"
      ? sql`(${field.expr} IS NOT NULL)`
      : sql`COALESCE(${field.expr} <> '', false)`
  }
  if (value === null) {
    if (op === "eq") return sql`(${field.expr} IS NULL)`
    if (op === "ne") return sql`(${field.expr} IS NOT NULL)`
    throw bad(`${op} null is not a comparison`)
  }
  switch (field.type) {
    case "boolean": {
      const text = typeof value === "boolean"
        ? String(value)
        : typeof value === "string"
        ? value.toLowerCase()
        : undefined
      if (text !== "true" && text !== "false") throw bad(`expected true or false, got ${describe(value)}`)
      if (op === "eq") return sql`COALESCE(${field.expr} = ${text}, false)`
      if (op === "ne") return sql`(${field.expr} IS DISTINCT FROM ${text})`
      throw bad(`${op} does not apply to a boolean`)
    }
    case "dateTime": {
      const at = typeof value === "string" ? parseDateTime(value) : undefined
      if (at === undefined) {
        throw bad(`expected an ISO 8601 date-time such as "2024-01-02T03:04:05Z", got ${describe(value)}`)
      }
      // Stored times have microseconds, filters at most milliseconds.
      const expr = sql`date_trunc('milliseconds', ${field.expr})`
      switch (op) {
        case "eq":
          return sql`COALESCE(${expr} = ${at}, false)`
        case "ne":
          return sql`(${expr} IS DISTINCT FROM ${at})`
        case "gt":
          return sql`COALESCE(${expr} > ${at}, false)`
        case "ge":
          return sql`COALESCE(${expr} >= ${at}, false)`
        case "lt":
          return sql`COALESCE(${expr} < ${at}, false)`
        case "le":
          return sql`COALESCE(${expr} <= ${at}, false)`
        default:
          throw bad(`${op} does not apply to a date-time`)
      }
    }
    default: {
      if (typeof value !== "string" && typeof value !== "number") throw bad(`expected a string, got ${describe(value)}`)
      const text = String(value)
      const left = field.caseExact ? field.expr : sql`lower(${field.expr})`
      const right = field.caseExact ? sql`${text}::text` : sql`lower(${text}::text)`
      switch (op) {
        case "eq":
          return sql`COALESCE(${left} = ${right}, false)`
        case "ne":
          return sql`(${left} IS DISTINCT FROM ${right})`
        case "co":
          return sql`COALESCE(strpos(${left}, ${right}) > 0, false)`
        case "sw":
          return sql`COALESCE(starts_with(${left}, ${right}), false)`
        case "ew":
          return sql`COALESCE(right(${left}, length(${right})) = ${right}, false)`
        case "gt":
          return sql`COALESCE(${left} > ${right}, false)`
        case "ge":
          return sql`COALESCE(${left} >= ${right}, false)`
        case "lt":
          return sql`COALESCE(${left} < ${right}, false)`
        case "le":
          return sql`COALESCE(${left} <= ${right}, false)`
        default:
          throw bad(`unknown operator ${op}`)
      }
    }
  }
}

/** Translates a parsed filter of one resource type into a SQL condition with bound parameters. */
export const toSql = (
  sql: Sql,
  fields: FieldTable,
  filterText: string,
  filter: Filter = parseFilter(filterText)
): Fragment => {
  const dotted = closingBrackets(filterText)
  let bracket = 0
  let aliases = 0
  const nextAlias = () => `scim_v${++aliases}`

  const unknown = (attribute: string) =>
    new InvalidFilter(
      `Unknown attribute ${JSON.stringify(attribute)} in filter: see /v1/scim/Schemas for the supported attributes.`
    )

  /** A comparison inside a value path, on a sub-attribute of the multi-valued field. */
  const inValue = (multi: MultiField, alias: string, filter: Filter, parent: string): Fragment => {
    switch (filter.op) {
      case "and":
        return sql.and(filter.filters.map((child) => inValue(multi, alias, child, parent)))
      case "or":
        return sql.or(filter.filters.map((child) => inValue(multi, alias, child, parent)))
      case "not":
        return sql`NOT ${inValue(multi, alias, filter.filter, parent)}`
      case "[]":
        throw new InvalidFilter(`Value paths cannot be nested (in ${parent}[...]).`)
      default: {
        const sub = multi.sub(alias, filter.attrPath)
        if (sub === undefined) throw unknown(`${parent}.${filter.attrPath}`)
        return compare(
          sql,
          sub,
          filter.op,
          filter.op === "pr" ? undefined : filter.compValue,
          `${parent}.${filter.attrPath}`
        )
      }
    }
  }

  const multiValued = (attribute: string): MultiField => {
    const field = fields.resolve(attribute)
    if (field === undefined) throw unknown(attribute)
    if (field._tag !== "Multi") {
      throw new InvalidFilter(`${attribute} is not multi-valued: a value path [...] needs a multi-valued attribute.`)
    }
    return field
  }

  /** `attr[valFilter]`, with `and` an optional comparison on a sub-attribute of the same value (`attr[...].sub op v`). */
  const valuePath = (filter: ValuePath, and?: Compare | Suffix): Fragment => {
    bracket++
    const multi = multiValued(filter.attrPath)
    const alias = nextAlias()
    const conditions = [inValue(multi, alias, filter.valFilter, filter.attrPath)]
    if (and !== undefined) {
      const subName = and.attrPath.slice(filter.attrPath.length + 1)
      const sub = multi.sub(alias, subName)
      if (sub === undefined) throw unknown(and.attrPath)
      conditions.push(compare(sql, sub, and.op, and.op === "pr" ? undefined : and.compValue, and.attrPath))
    }
    return multi.exists(alias, sql.and(conditions))
  }

  const translate = (filter: Filter): Fragment => {
    switch (filter.op) {
      case "and": {
        const [first, second] = filter.filters
        if (
          filter.filters.length === 2 && first.op === "[]" && dotted[bracket] === true && isComparison(second) &&
          second.attrPath.toLowerCase().startsWith(`${first.attrPath.toLowerCase()}.`)
        ) {
          return valuePath(first, second)
        }
        return sql.and(filter.filters.map(translate))
      }
      case "or":
        return sql.or(filter.filters.map(translate))
      case "not":
        return sql`NOT ${translate(filter.filter)}`
      case "[]":
        return valuePath(filter)
      default: {
        const value = filter.op === "pr" ? undefined : filter.compValue
        const field = fields.resolve(filter.attrPath)
        if (field !== undefined && field._tag === "Scalar") {
          return compare(sql, field, filter.op, value, filter.attrPath)
        }
        if (field !== undefined) {
          const alias = nextAlias()
          if (filter.op === "pr") return field.exists(alias, sql`true`)
          const sub = field.sub(alias, field.defaultSub)!
          return field.exists(alias, compare(sql, sub, filter.op, value, filter.attrPath))
        }
        // `emails.value`, `members.value`: a sub-attribute of a multi-valued attribute.
        const dot = filter.attrPath.lastIndexOf(".")
        const parent = dot > 0 ? fields.resolve(filter.attrPath.slice(0, dot)) : undefined
        if (parent === undefined || parent._tag !== "Multi") throw unknown(filter.attrPath)
        const alias = nextAlias()
        const sub = parent.sub(alias, filter.attrPath.slice(dot + 1))
        if (sub === undefined) throw unknown(filter.attrPath)
        return parent.exists(alias, compare(sql, sub, filter.op, value, filter.attrPath))
      }
    }
  }

  return translate(filter)
}

/** A sort key: a single-valued attribute (RFC 7644 §3.4.2.3); anything else is a 400 invalidValue. */
export const sortKey = (fields: FieldTable, sortBy: string): ScalarField => {
  const field = fields.resolve(sortBy)
  if (field === undefined || field._tag !== "Scalar") {
    throw new InvalidFilter(
      `Cannot sort by ${
        JSON.stringify(sortBy)
      }: name a single-valued attribute such as userName, displayName or meta.created.`,
      "invalidValue"
    )
  }
  return field
}
