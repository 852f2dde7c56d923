/**
 * What identity providers send, reduced to what the SCIM schemas define
 * (`/Schemas`): attribute names matched case-insensitively and written in
 * their canonical case, unknown attributes and extensions dropped (never a
 * 400), read-only attributes ignored, `"True"`/`"False"` read as booleans
 * (Entra), a single value of a multi-valued attribute read as a list, at most
 * one `primary`. And the reverse: a resource projected onto the
 * `attributes` / `excludedAttributes` a client asked for.
 */
import { Scim, ScimSchemas } from "@agent-platform/domain"

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

const simpleOf = (definition: AttributeDefinition, value: unknown, path: string): unknown => {
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
      if (typeof value !== "string" || Number.isNaN(Date.parse(value))) {
        throw new InvalidAttribute(path, "expected an ISO 8601 date-time")
      }
      return value
    default:
      // Providers send numbers for string attributes (employee numbers, postal codes): keep them as text.
      if (typeof value === "string") return value
      if (typeof value === "number" || typeof value === "boolean") return String(value)
      throw new InvalidAttribute(path, "expected a string")
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

const singleOf = (definition: AttributeDefinition, value: unknown, path: string): unknown => {
  if (value === null || value === undefined) return undefined
  if (definition.type !== "complex") return simpleOf(definition, value, path)
  // Entra sends a manager as its id alone; a complex value given as a string is its `value`.
  const object = typeof value === "string" && definition.subAttributes?.some((sub) => sub.name === "value")
    ? { value }
    : value
  if (!isPlainObject(object)) throw new InvalidAttribute(path, "expected an object")
  const result = normalizeAttributes(definition.subAttributes ?? [], object, path)
  return Object.keys(result).length === 0 ? undefined : result
}

/** One attribute's value, normalized; undefined when it is unassigned. */
export const normalizeValue = (definition: AttributeDefinition, value: unknown, path: string): unknown => {
  if (value === null || value === undefined) return undefined
  if (!definition.multiValued) {
    if (Array.isArray(value)) {
      if (value.length > 1) throw new InvalidAttribute(path, "expected a single value, got a list")
      return singleOf(definition, value[0], path)
    }
    return singleOf(definition, value, path)
  }
  const items = (Array.isArray(value) ? value : [value])
    .map((item, index) => singleOf(definition, item, `${path}[${index}]`))
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
  path = ""
): Record<string, unknown> => {
  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) {
    const definition = ScimSchemas.findAttribute(definitions, key)
    if (definition === undefined || definition.mutability === "readOnly") continue
    const normalized = normalizeValue(definition, value, path === "" ? definition.name : `${path}.${definition.name}`)
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
      externalId = value === null ? null : (simpleOf(ScimSchemas.commonAttributes[1], value, "externalId") as string)
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
        ...normalizeAttributes(extension.attributes, value, extension.id)
      }
      continue
    }
    // A flattened extension attribute, `urn:...:enterprise:2.0:User:department`.
    const flattened = extensions.find((candidate) => lower.startsWith(`${candidate.id.toLowerCase()}:`))
    if (flattened !== undefined) {
      const attributes = normalizeAttributes(
        flattened.attributes,
        { [key.slice(flattened.id.length + 1)]: value },
        flattened.id
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

const include = (value: unknown, tree: Tree): unknown => {
  if (tree.size === 0) return value
  if (Array.isArray(value)) return value.map((item) => include(item, tree))
  if (!isPlainObject(value)) return value
  const result: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    const subtree = tree.get(key.toLowerCase())
    if (subtree !== undefined) result[key] = include(child, subtree)
  }
  return result
}

const exclude = (value: unknown, tree: Tree): unknown => {
  if (Array.isArray(value)) return value.map((item) => exclude(item, tree))
  if (!isPlainObject(value)) return value
  const result: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    const subtree = tree.get(key.toLowerCase())
    if (subtree === undefined) result[key] = child
    else if (subtree.size > 0) result[key] = exclude(child, subtree)
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

/** A resource with only the asked-for attributes; `id` and `schemas` are always returned (RFC 7643 §2.2). */
export const project = <A extends Record<string, unknown>>(
  resource: A,
  projection: Projection,
  schemaUrn: string,
  extensionUrns: ReadonlyArray<string> = []
): A => {
  const always = { schemas: resource.schemas, id: resource.id }
  const included = parsePaths(projection.attributes, schemaUrn, extensionUrns)
  if (included.length > 0) return { ...(include(resource, toTree(included)) as A), ...always }
  const excluded = parsePaths(projection.excludedAttributes, schemaUrn, extensionUrns)
  if (excluded.length > 0) return { ...(exclude(resource, toTree(excluded)) as A), ...always }
  return resource
}
