/**
 * PatchOp (RFC 7644 §3.5.2), applied with `scim-patch` after the requests of
 * the big identity providers are read the way they mean them:
 *
 * - `op` in any case (Entra sends "Replace", "Add", "Remove");
 * - a `replace`/`add` without `path` whose value has dotted keys
 *   (`{"name.givenName": "X"}`) or a complex attribute given whole
 *   (`{"name": {"givenName": "X"}}`): only the named sub-attributes change;
 * - an extension given whole (`{"urn:...:enterprise:2.0:User": {...}}`) or as
 *   a path: its attributes are patched one by one;
 * - `remove` of `members` with a value list (Entra) removes those members;
 *   a value on a single-valued attribute is ignored;
 * - read-only attributes: a path naming one is a 400 `mutability`; in a
 *   value, the same value (Okta repeats `id`) is ignored, another is a 400.
 */
import { Scim, ScimSchemas } from "@agent-platform/domain"
import { ScimError, scimPatch, type ScimPatchOperation } from "scim-patch"

type SchemaDefinition = ScimSchemas.SchemaDefinition

export interface PatchTarget {
  readonly schema: SchemaDefinition
  readonly extensions: ReadonlyArray<SchemaDefinition>
  /** Lower-cased names of attributes a client may not change (`id`, `meta`, `groups`). */
  readonly readOnly: ReadonlyArray<string>
}

/** Most operations accepted in one request. */
export const maxOperations = 1000

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const invalid = (scimType: Scim.ScimType, detail: string) => Scim.ScimBadRequest.of(scimType, detail)

/** The first attribute a path names, lower-cased, without its schema URN, and whether it is an extension's. */
const attributeOf = (target: PatchTarget, path: string) => {
  const lower = path.toLowerCase()
  const extension = target.extensions.find((candidate) =>
    lower === candidate.id.toLowerCase() || lower.startsWith(`${candidate.id.toLowerCase()}:`)
  )
  if (extension !== undefined) {
    const rest = path.slice(extension.id.length + 1)
    return { extension, name: rest.split(/[.[]/)[0].toLowerCase() }
  }
  const core = lower.startsWith(`${target.schema.id.toLowerCase()}:`) ? lower.slice(target.schema.id.length + 1) : lower
  return { extension: undefined, name: core.split(/[.[]/)[0] }
}

/** `{"name": {"givenName": "X"}}` → `{"name.givenName": "X"}` for single-valued complex attributes; extensions likewise. */
const flattenValue = (target: PatchTarget, value: Record<string, unknown>): Record<string, unknown> => {
  const result: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const extension = target.extensions.find((candidate) => key.toLowerCase() === candidate.id.toLowerCase())
    if (extension !== undefined && isPlainObject(item)) {
      for (
        const [sub, subValue] of Object.entries(flattenValue({ ...target, schema: extension, extensions: [] }, item))
      ) {
        result[`${extension.id}:${sub}`] = subValue
      }
      continue
    }
    const definition = ScimSchemas.findAttribute(target.schema.attributes, key)
    if (definition !== undefined && definition.type === "complex" && !definition.multiValued && isPlainObject(item)) {
      for (const [sub, subValue] of Object.entries(item)) result[`${definition.name}.${sub}`] = subValue
      continue
    }
    result[key] = item
  }
  return result
}

/**
 * Member values reduced to their `value`, so removal by value matches
 * whatever else the provider sent with it; a member without a `value` (the
 * id of a user) is a 400 invalidValue, not a member silently left out.
 */
const memberValues = (value: unknown, where: string): Array<{ readonly value: string }> | Scim.ScimBadRequest => {
  const items = Array.isArray(value) ? value : [value]
  const result: Array<{ readonly value: string }> = []
  for (const [index, item] of items.entries()) {
    const id = isPlainObject(item) ? item.value : undefined
    if (typeof id !== "string" || id.trim() === "") {
      return invalid(
        "invalidValue",
        `${where}[${index}] must be a member {"value": "<user id>"}; got ${JSON.stringify(item) ?? "nothing"}.`
      )
    }
    result.push({ value: id })
  }
  return result
}

/**
 * The operations of a PatchOp body, read as the providers mean them and
 * checked against the target's read-only attributes. `current` is the
 * resource as it is (for read-only values repeated unchanged).
 */
export const readOperations = (
  target: PatchTarget,
  body: Record<string, unknown>,
  current: Record<string, unknown>
): Array<ScimPatchOperation> | Scim.ScimBadRequest => {
  const schemas = body.schemas
  if (
    schemas !== undefined &&
    (!Array.isArray(schemas) ||
      !schemas.some((urn) => typeof urn === "string" && urn.toLowerCase() === Scim.PatchOpUrn.toLowerCase()))
  ) {
    return invalid("invalidSyntax", `A PATCH body's schemas must list ${Scim.PatchOpUrn}.`)
  }
  const operations = body.Operations ?? body.operations
  if (!Array.isArray(operations) || operations.length === 0) {
    return invalid("invalidSyntax", "A PATCH body needs Operations: a non-empty list of {op, path, value}.")
  }
  if (operations.length > maxOperations) return invalid("tooMany", `At most ${maxOperations} operations per request.`)
  const result: Array<ScimPatchOperation> = []
  for (const [index, raw] of operations.entries()) {
    if (!isPlainObject(raw)) return invalid("invalidSyntax", `Operations[${index}] must be an object.`)
    const op = typeof raw.op === "string" ? raw.op.toLowerCase() : undefined
    if (op !== "add" && op !== "replace" && op !== "remove") {
      return invalid(
        "invalidSyntax",
        `Operations[${index}].op must be add, replace or remove; got ${JSON.stringify(raw.op)}.`
      )
    }
    const path = raw.path
    if (path !== undefined && path !== null && (typeof path !== "string" || path.trim() === "")) {
      return invalid("invalidPath", `Operations[${index}].path must be a non-empty string.`)
    }
    if (typeof path === "string") {
      const { extension, name } = attributeOf(target, path.trim())
      if (extension === undefined && target.readOnly.includes(name)) {
        return invalid("mutability", `${path} is read-only and cannot be changed.`)
      }
      // A whole extension as the path: patch its attributes one by one.
      if (extension !== undefined && path.trim().toLowerCase() === extension.id.toLowerCase()) {
        if (op === "remove") {
          result.push({ op: "remove", path: extension.id })
          continue
        }
        if (!isPlainObject(raw.value)) {
          return invalid("invalidValue", `Operations[${index}].value must be an object of ${extension.id} attributes.`)
        }
        result.push({ op, value: flattenValue(target, { [extension.id]: raw.value }) })
        continue
      }
      const definition = extension === undefined
        ? ScimSchemas.findAttribute(target.schema.attributes, name)
        : ScimSchemas.findAttribute(extension.attributes, name)
      const isMembers = extension === undefined && name === "members"
      if (op === "remove") {
        // A value only selects what to remove from a list; on anything else it is noise.
        const keepValue = raw.value !== undefined && raw.value !== null && definition?.multiValued === true &&
          !path.includes("[")
        if (!keepValue) {
          result.push({ op, path })
          continue
        }
        const value = isMembers ? memberValues(raw.value, `Operations[${index}].value`) : raw.value
        if (value instanceof Scim.ScimBadRequest) return value
        result.push({ op, path, value })
        continue
      }
      if (!("value" in raw)) return invalid("invalidSyntax", `Operations[${index}] (${op}) needs a value.`)
      const value = isMembers && !path.includes("[") ? memberValues(raw.value, `Operations[${index}].value`) : raw.value
      if (value instanceof Scim.ScimBadRequest) return value
      result.push({ op, path, value })
      continue
    }
    if (op === "remove") return invalid("noTarget", `Operations[${index}]: remove needs a path.`)
    if (!isPlainObject(raw.value)) {
      return invalid("invalidValue", `Operations[${index}]: without a path, value must be an object of attributes.`)
    }
    const value: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(flattenValue(target, raw.value))) {
      const name = attributeOf(target, key)
      if (name.extension === undefined && target.readOnly.includes(name.name)) {
        const same = JSON.stringify(current[name.name]) === JSON.stringify(item) || name.name === "schemas" ||
          name.name === "meta"
        if (same || name.name === "groups") continue
        return invalid("mutability", `${key} is read-only and cannot be changed.`)
      }
      if (name.extension === undefined && name.name === "members") {
        const members = memberValues(item, `Operations[${index}].value.${key}`)
        if (members instanceof Scim.ScimBadRequest) return members
        value[key] = members
      } else {
        value[key] = item
      }
    }
    if (Object.keys(value).length > 0) result.push({ op, value })
  }
  return result
}

/** Applies operations to a copy of a resource; a failure is a SCIM 400 with the library's scimType. */
export const applyOperations = <A extends Record<string, unknown>>(
  resource: A,
  operations: ReadonlyArray<ScimPatchOperation>
): A | Scim.ScimBadRequest => {
  try {
    const copy = JSON.parse(JSON.stringify(resource))
    return scimPatch(copy, [...operations], { mutateDocument: true, treatMissingAsAdd: true }) as A
  } catch (error) {
    if (error instanceof ScimError) {
      const scimType = (Scim.ScimTypes as ReadonlyArray<string>).includes(error.scimCode ?? "")
        ? error.scimCode as Scim.ScimType
        : "invalidSyntax"
      return invalid(scimType, error.message)
    }
    return invalid(
      "invalidPath",
      `The patch cannot be applied: ${error instanceof Error ? error.message : String(error)}.`
    )
  }
}

/** The password the operations set, if any (the last one wins): it is hashed before the change is written. */
export const passwordOf = (operations: ReadonlyArray<ScimPatchOperation>): string | undefined => {
  let password: string | undefined
  for (const operation of operations) {
    if (operation.op === "remove") continue
    const path = operation.path?.toLowerCase()
    if (path === "password" || path === `${ScimSchemas.UserSchemaUrn.toLowerCase()}:password`) {
      if (typeof operation.value === "string") password = operation.value
    } else if (path === undefined && isPlainObject(operation.value)) {
      for (const [key, value] of Object.entries(operation.value)) {
        if (key.toLowerCase() === "password" && typeof value === "string") password = value
      }
    }
  }
  return password
}
