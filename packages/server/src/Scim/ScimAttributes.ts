/**
 * What identity providers send, reduced to what the SCIM schemas define
 * (`/Schemas`): attribute names matched case-insensitively and written in
 * their canonical case, unknown attributes and extensions dropped (never a
 * 400), read-only attributes ignored, `"True"`/`"False"` read as booleans
 * (Entra), a single value of a multi-valued attribute read as a list, at most
 * one `primary`. A value of another type is a 400 invalidValue, the same in
 * POST, PUT and PATCH: a number is text only in the Enterprise User
 * extension, whose identifiers (employeeNumber, costCenter) HR systems send
 * as numbers. And the reverse: a resource projected onto the `attributes` /
 * `excludedAttributes` a client asked for, as each attribute's `returned`
 * says.
 */
import { Scim, ScimSchemas } from "@agent-platform/domain"
import { parseDateTime } from "./ScimDateTime.ts"

type AttributeDefinition = ScimSchemas.AttributeDefinition
type SchemaDefinition = ScimSchemas.SchemaDefinition

/** An attribute value that does not fit its definition: a 400 `invalidValue`. */
export class InvalidAttribute extends Error {
  constructor(readonly path: string, readonly reason: string) {
    super(`${path}: ${reason}`)
  }
  toScim() {
    return Scim.ScimBadRequest.of("invalidValue", `Invalid value for ${this.path}: ${this.reason}.`)
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const booleanOf = (value: unknown, path: string): boolean => {
  if (typeof value === "boolean") return value
  if (typeof value === "string") {
    const lower = value.trim().toLowerCase()
    if (lower === "true") return true
    if (lower === "false") return false
  }
  throw new InvalidAttribute(path, `expected a boolean, got ${JSON.stringify(value)}`)
}

/** How strictly a value is read: `numbersAsText` lets a string attribute take a number (the extension's). */
interface Reading {
  readonly numbersAsText: boolean
}

const strict: Reading = { numbersAsText: false }
const extensionReading: Reading = { numbersAsText: true }

const describeValue = (value: unknown) => {
  const json = JSON.stringify(value)
  return json.length > 60 ? `${json.slice(0, 57)}...` : json
}

const simpleOf = (definition: AttributeDefinition, value: unknown, path: string, reading: Reading): unknown => {
  switch (definition.type) {
    case "boolean":
      return booleanOf(value, path)
    case "integer":
    case "decimal": {
      const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value
      if (
        typeof number !== "number" || !Number.isFinite(number) ||
        (definition.type === "integer" && !Number.isInteger(number))
      ) {
        throw new InvalidAttribute(path, `expected ${definition.type === "integer" ? "an integer" : "a number"}`)
      }
      return number
    }
    case "dateTime":
      if (typeof value !== "string" || parseDateTime(value) === undefined) {
        throw new InvalidAttribute(path, "expected an ISO 8601 date-time")
      }
      return value
    default:
      if (typeof value === "string") return value
      // HR systems number their employees and cost centers: the extension keeps such numbers as text.
      if (reading.numbersAsText && typeof value === "number") return String(value)
      throw new InvalidAttribute(path, `expected a string, got ${describeValue(value)}`)
  }
}

/** Only one value of a multi-valued attribute may be primary (RFC 7643 §2.4): the first one stays. */
const onePrimary = (values: Array<unknown>): Array<unknown> => {
  let seen = false
  return values.map((value) => {
    if (!isPlainObject(value) || value.primary !== true) return value
    if (!seen) {
      seen = true
      return value
    }
    return { ...value, primary: false }
  })
}

const singleOf = (definition: AttributeDefinition, value: unknown, path: string, reading: Reading): unknown => {
  if (value === null || value === undefined) return undefined
  if (definition.type !== "complex") return simpleOf(definition, value, path, reading)
  // Entra sends a manager as its id alone: a single-valued complex value given as a string is its `value`.
  const object = typeof value === "string" && !definition.multiValued &&
      definition.subAttributes?.some((sub) => sub.name === "value")
    ? { value }
    : value
  if (!isPlainObject(object)) throw new InvalidAttribute(path, `expected an object, got ${describeValue(value)}`)
  const result = normalizeAttributes(definition.subAttributes ?? [], object, path, reading)
  return Object.keys(result).length === 0 ? undefined : result
}

/** One attribute's value, normalized; undefined when it is unassigned. */
export const normalizeValue = (
  definition: AttributeDefinition,
  value: unknown,
  path: string,
  reading: Reading = strict
): unknown => {
  if (value === null || value === undefined) return undefined
  if (!definition.multiValued) {
    if (Array.isArray(value)) throw new InvalidAttribute(path, "expected a single value, got a list")
    return singleOf(definition, value, path, reading)
  }
  const items = (Array.isArray(value) ? value : [value])
    .map((item, index) => singleOf(definition, item, `${path}[${index}]`, reading))
    .filter((item) => item !== undefined)
  return items.length === 0 ? undefined : onePrimary(items)
}

/**
 * The attributes of an object that the definitions know, canonically named
 * and normalized; read-only ones are ignored (RFC 7644 §3.5.1).
 */
export const normalizeAttributes = (
  definitions: ReadonlyArray<AttributeDefinition>,
  input: Record<string, unknown>,
  path = "",
  reading: Reading = strict
): Record<string, unknown> => {
  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) {
    const definition = ScimSchemas.findAttribute(definitions, key)
    if (definition === undefined || definition.mutability === "readOnly") continue
    const normalized = normalizeValue(
      definition,
      value,
      path === "" ? definition.name : `${path}.${definition.name}`,
      reading
    )
    if (normalized !== undefined) result[definition.name] = normalized
  }
  return result
}

/** A resource body, reduced to its schema and extensions. */
export interface NormalizedResource {
  /** The core schema's attributes. */
  readonly attributes: Record<string, unknown>
  /** Each extension's attributes, by schema URN; absent when none was sent. */
  readonly extensions: Record<string, Record<string, unknown>>
  /** `null` clears it; undefined when not sent. */
  readonly externalId: string | null | undefined
}

/** Splits a body into the core schema's attributes, the extensions' and externalId; the rest is ignored. */
export const normalizeResource = (
  schema: SchemaDefinition,
  extensions: ReadonlyArray<SchemaDefinition>,
  body: Record<string, unknown>
): NormalizedResource => {
  const core: Record<string, unknown> = {}
  const byExtension: Record<string, Record<string, unknown>> = {}
  let externalId: string | null | undefined = undefined
  for (const [key, value] of Object.entries(body)) {
    const lower = key.toLowerCase()
    if (lower === "externalid") {
      externalId = value === null
        ? null
        : (simpleOf(ScimSchemas.commonAttributes[1], value, "externalId", strict) as string)
      continue
    }
    const extension = extensions.find((candidate) => lower === candidate.id.toLowerCase())
    if (extension !== undefined) {
      if (value === null) {
        byExtension[extension.id] = {}
        continue
      }
      if (!isPlainObject(value)) throw new InvalidAttribute(extension.id, "expected an object")
      byExtension[extension.id] = {
        ...byExtension[extension.id],
        ...normalizeAttributes(extension.attributes, value, extension.id, extensionReading)
      }
      continue
    }
    // A flattened extension attribute, `urn:...:enterprise:2.0:User:department`.
    const flattened = extensions.find((candidate) => lower.startsWith(`${candidate.id.toLowerCase()}:`))
    if (flattened !== undefined) {
      const attributes = normalizeAttributes(
        flattened.attributes,
        { [key.slice(flattened.id.length + 1)]: value },
        flattened.id,
        extensionReading
      )
      byExtension[flattened.id] = { ...byExtension[flattened.id], ...attributes }
      continue
    }
    // `urn:ietf:params:scim:schemas:core:2.0:User:userName` names a core attribute.
    const coreKey = lower.startsWith(`${schema.id.toLowerCase()}:`) ? key.slice(schema.id.length + 1) : key
    Object.assign(core, normalizeAttributes(schema.attributes, { [coreKey]: value }))
  }
  return { attributes: core, extensions: byExtension, externalId }
}

/** Runs a normalization, turning an invalid value into its SCIM 400. */
export const attempt = <A>(
  normalize: () => A
): { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: Scim.ScimBadRequest } => {
  try {
    return { ok: true, value: normalize() }
  } catch (error) {
    if (error instanceof InvalidAttribute) return { ok: false, error: error.toScim() }
    throw error
  }
}

// ---------------------------------------------------------------------------
// Projection (RFC 7644 §3.9)
// ---------------------------------------------------------------------------

/** Attribute paths as lower-cased segments: `name.givenName` is ["name", "givenname"]; an extension URN is one segment. */
const parsePaths = (
  list: string | undefined,
  schemaUrn: string,
  extensionUrns: ReadonlyArray<string>
): Array<Array<string>> =>
  (list ?? "")
    .split(",")
    .map((raw) => raw.trim())
    .filter((raw) => raw.length > 0)
    .map((raw) => {
      const lower = raw.toLowerCase()
      const extension = extensionUrns.find((urn) =>
        lower === urn.toLowerCase() || lower.startsWith(`${urn.toLowerCase()}:`)
      )
      if (extension !== undefined) {
        const rest = raw.slice(extension.length + 1)
        return [extension.toLowerCase(), ...(rest === "" ? [] : rest.toLowerCase().split("."))]
      }
      const core = lower.startsWith(`${schemaUrn.toLowerCase()}:`) ? lower.slice(schemaUrn.length + 1) : lower
      return core.split(".")
    })

type Tree = Map<string, Tree>

const toTree = (paths: ReadonlyArray<ReadonlyArray<string>>): Tree => {
  const root: Tree = new Map()
  for (const path of paths) {
    let node = root
    for (const segment of path) {
      const next = node.get(segment) ?? new Map()
      node.set(segment, next)
      node = next
    }
  }
  return root
}

/** An attribute as a projection sees it: how it is returned, and its sub-attributes. */
interface Returnable {
  readonly returned: ScimSchemas.Returned
  readonly subAttributes?: ReadonlyArray<Named> | undefined
}

type Named = Returnable & { readonly name: string }

/** Each list of definitions indexed by lower-cased name, once: a list page projects up to 1000 resources. */
const indexes = new WeakMap<ReadonlyArray<Named>, ReadonlyMap<string, Named>>()

const findReturnable = (definitions: ReadonlyArray<Named>, key: string): Named | undefined => {
  let index = indexes.get(definitions)
  if (index === undefined) {
    index = new Map(definitions.map((definition) => [definition.name.toLowerCase(), definition]))
    indexes.set(definitions, index)
  }
  return index.get(key.toLowerCase())
}

/**
 * A value reduced to what is returned (RFC 7644 §3.4.2.5, RFC 7643 §2.2): an
 * attribute `always` returned is kept whatever was asked, one `never`
 * returned is dropped; with `attributes` (`included`) only the named ones and
 * those always returned remain, else those `excluded` (or returned only on
 * `request`) are left out. An attribute no definition knows is `default`.
 */
const select = (
  value: unknown,
  definitions: ReadonlyArray<Named>,
  included: Tree | undefined,
  excluded: Tree | undefined
): unknown => {
  if (Array.isArray(value)) return value.map((item) => select(item, definitions, included, excluded))
  if (!isPlainObject(value)) return value
  const result: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    const definition = findReturnable(definitions, key)
    const returned = definition?.returned ?? "default"
    if (returned === "always") {
      result[key] = child
      continue
    }
    if (returned === "never") continue
    const subDefinitions = definition?.subAttributes ?? []
    if (included !== undefined) {
      const subtree = included.get(key.toLowerCase())
      if (subtree !== undefined) {
        result[key] = select(child, subDefinitions, subtree.size === 0 ? undefined : subtree, undefined)
      }
      continue
    }
    if (returned === "request") continue
    const subtree = excluded?.get(key.toLowerCase())
    if (subtree !== undefined && subtree.size === 0) continue
    result[key] = select(child, subDefinitions, undefined, subtree)
  }
  return result
}

export interface Projection {
  readonly attributes?: string | undefined
  readonly excludedAttributes?: string | undefined
}

/** Whether the projection leaves an attribute out (e.g. `members`), so it need not be read at all. */
export const excludes = (projection: Projection, attribute: string, schemaUrn: string): boolean => {
  const lower = attribute.toLowerCase()
  const included = parsePaths(projection.attributes, schemaUrn, [])
  if (included.length > 0) return !included.some((path) => path[0] === lower)
  return parsePaths(projection.excludedAttributes, schemaUrn, []).some((path) => path.length === 1 && path[0] === lower)
}

/** `schemas` is always returned (RFC 7643 §3), though no schema lists it as an attribute. */
const schemasAttribute: Named = { name: "schemas", returned: "always" }

/** The top-level attributes of a resource of `schema`, by schema (built once: a schema always has the same extensions). */
const topLevel = new WeakMap<ScimSchemas.SchemaDefinition, ReadonlyArray<Named>>()

const resourceAttributes = (
  schema: ScimSchemas.SchemaDefinition,
  extensions: ReadonlyArray<ScimSchemas.SchemaDefinition>
): ReadonlyArray<Named> => {
  let definitions = topLevel.get(schema)
  if (definitions === undefined) {
    definitions = [
      schemasAttribute,
      ...ScimSchemas.commonAttributes,
      ...schema.attributes,
      ...extensions.map((extension) => ({
        name: extension.id,
        returned: "default" as const,
        subAttributes: extension.attributes
      }))
    ]
    topLevel.set(schema, definitions)
  }
  return definitions
}

/**
 * A resource with only the asked-for attributes, as the `returned` of each
 * attribute in `/Schemas` says (`id` and `schemas` always are; `password`
 * never is): the core schema's attributes, the common ones (`id`,
 * `externalId`, `meta`) and each extension's, under its URN.
 */
export const project = <A extends Record<string, unknown>>(
  resource: A,
  projection: Projection,
  schema: ScimSchemas.SchemaDefinition,
  extensions: ReadonlyArray<ScimSchemas.SchemaDefinition> = []
): A => {
  const extensionUrns = extensions.map((extension) => extension.id)
  const included = parsePaths(projection.attributes, schema.id, extensionUrns)
  const excluded = parsePaths(projection.excludedAttributes, schema.id, extensionUrns)
  const definitions = resourceAttributes(schema, extensions)
  return (included.length > 0
    ? select(resource, definitions, toTree(included), undefined)
    : select(resource, definitions, undefined, excluded.length > 0 ? toTree(excluded) : undefined)) as A
}
