/**
 * What `/openapi.json` says beyond what the schemas generate, applied to the
 * whole generated document in one place (the `transform` annotation of
 * {@link Api}), so that outside tools — redocly's `recommended` rules,
 * Spectral's `spectral:oas`, openapi-typescript — accept every group,
 * including groups added later, without each group repeating it:
 *
 * - the document names its server, license and contact;
 * - tags are unique (groups sharing a title are merged) and described;
 * - `Schema.Int`'s ±(2^53 − 1) bounds, which are no real bound, are dropped;
 * - `anyOf` with an empty schema (from `Schema.NullOr(Schema.Unknown)`) is
 *   the empty schema it means (any value);
 * - an object schema with no properties (a `Schema.Record`) says
 *   `additionalProperties: true`, so generated clients can send its fields;
 * - request bodies are open: the server ignores fields it does not know, so a
 *   request schema never says `additionalProperties: false`;
 * - the errors the HTTP edge answers before any endpoint runs are documented
 *   on every operation they can happen to (413 and 415 with a body, 431);
 * - a declared error without an example gets one: its `_tag` and, as
 *   `error`, its description (a SCIM error: its `status` and, as `detail`,
 *   its description).
 *
 * What a group still carries itself: a `description` on its group (its tag)
 * and on every endpoint, examples on its payloads and success bodies, and
 * real bounds on the integers it accepts.
 */

// OpenAPI documents are plain JSON: walked and rewritten as such.
type Json = Record<string, any>

/** The contract's license (SPDX). */
export const license = { name: "MIT", identifier: "MIT" }

/** Not a bound: what `Schema.Int` declares when nothing narrower is checked. */
const unboundedInteger = 9007199254740991

const edgeErrorSchema = {
  type: "object",
  properties: {
    error: { type: "string", description: "What went wrong and what to do" },
    _tag: { type: "string" }
  },
  required: ["error"]
}

const edgeError = (description: string, error: string, tag: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/EdgeError" }, example: { error, _tag: tag } } }
})

/** An error the HTTP edge answers itself under SCIM's paths, in SCIM's error schema. */
const scimEdgeError = (description: string, status: string, detail: string) => ({
  description,
  content: {
    "application/scim+json": {
      schema: {
        type: "object",
        properties: {
          _tag: { type: "string" },
          schemas: { type: "array", items: { type: "string" } },
          status: { type: "string" },
          scimType: { type: "string" },
          detail: { type: "string" }
        },
        required: ["schemas", "status", "detail"]
      },
      example: {
        _tag: status === "400" ? "ScimBadRequest" : "ScimError",
        schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
        status,
        ...(status === "400" ? { scimType: "invalidSyntax" } : {}),
        detail
      }
    }
  }
})

/** The errors the HTTP edge answers itself, before an endpoint runs. */
const edgeResponses = {
  PayloadTooLarge: edgeError(
    "The request body is larger than the service accepts (1 MiB, 2 MiB for ingestion; `MAX_BODY_BYTES`).",
    "the request body is larger than 1048576 bytes",
    "PayloadTooLarge"
  ),
  UnsupportedMediaType: edgeError(
    "The body is not `application/json` (SCIM also accepts `application/scim+json`), or is sent with a `Content-Encoding` (bodies are taken uncompressed): send a `Content-Type` this operation accepts.",
    "Content-Type must be application/json",
    "UnsupportedMediaType"
  ),
  MalformedPathParameter: edgeError(
    "A path parameter whose percent-encoding does not decode (a `%` not followed by two hexadecimal digits, or bytes that are not UTF-8): encode a literal `%` as `%25`.",
    "Invalid path /v1/agents/%ZZ: it holds a malformed percent-encoding (a % not followed by two hexadecimal digits, or bytes that are not UTF-8); encode a literal % as %25.",
    "InvalidRequest"
  ),
  UnsupportedMediaTypeWithoutBody: edgeError(
    "This operation reads no body: send none, or JSON (`Content-Type: application/json`). A body of another type is refused, as a browser form posted from another site would send it.",
    "Unsupported Content-Type text/plain: send a JSON body with Content-Type: application/json.",
    "UnsupportedMediaType"
  ),
  RequestHeaderFieldsTooLarge: edgeError(
    "The request's headers are larger than the service accepts.",
    "the request headers are too large",
    "RequestHeaderFieldsTooLarge"
  ),
  ScimRequestHeaderFieldsTooLarge: scimEdgeError(
    "The request's headers (or its request line: a long `filter`) are larger than the service accepts (16 KiB): send the query as a SearchRequest body (`POST .../.search`).",
    "431",
    "Request headers (or the request line) too large: send at most 16 KiB of them."
  ),
  ScimMalformedPathParameter: scimEdgeError(
    "A path parameter whose percent-encoding does not decode: encode a literal `%` as `%25`.",
    "400",
    "Invalid path /v1/scim/Groups/%ZZ: it holds a malformed percent-encoding; encode a literal % as %25."
  )
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Applies `visit` to every object in `value` outside examples, children before their parent. */
const everyObject = (value: unknown, visit: (node: Json) => void): void => {
  if (Array.isArray(value)) {
    for (const item of value) everyObject(item, visit)
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      // Examples are data, not schemas.
      if (key !== "example" && key !== "examples") everyObject(child, visit)
    }
    visit(value)
  }
}

const isEmptySchema = (schema: unknown) => isObject(schema) && Object.keys(schema).length === 0

/** The rewrites every schema gets, wherever it is. */
const normalizeSchema = (node: Json) => {
  if (node.maximum === unboundedInteger) delete node.maximum
  if (node.minimum === -unboundedInteger) delete node.minimum
  for (const keyword of ["anyOf", "oneOf"]) {
    if (Array.isArray(node[keyword]) && node[keyword].some(isEmptySchema)) delete node[keyword]
  }
  if (
    node.type === "object" && node.properties === undefined && node.additionalProperties === undefined &&
    node.patternProperties === undefined
  ) {
    node.additionalProperties = true
  }
}

/** Removes `additionalProperties: false` from a request schema and every component it uses. */
const openRequestSchema = (schema: unknown, components: Json, seen: Set<string>) => {
  everyObject(schema, (node) => {
    if (node.additionalProperties === false) delete node.additionalProperties
    if (typeof node.$ref === "string" && node.$ref.startsWith("#/components/schemas/")) {
      const name = node.$ref.slice("#/components/schemas/".length)
      if (!seen.has(name) && components[name] !== undefined) {
        seen.add(name)
        openRequestSchema(components[name], components, seen)
      }
    }
  })
}

const mergeTags = (tags: ReadonlyArray<Json>): Array<Json> => {
  const byName = new Map<string, Json>()
  for (const tag of tags) {
    const known = byName.get(tag.name)
    if (known === undefined) {
      byName.set(tag.name, { ...tag })
    } else if (tag.description !== undefined && tag.description !== known.description) {
      known.description = known.description === undefined
        ? tag.description
        : `${known.description}\n\n${tag.description}`
    }
  }
  return [...byName.values()]
}

/** The SCIM error message URN (RFC 7644 §3.12). */
const scimErrorUrn = "urn:ietf:params:scim:api:messages:2.0:Error"

/**
 * An example for a declared error whose response has none: `{error, _tag}`
 * for a `{_tag, error}` error, the SCIM error body (`_tag`, `schemas`,
 * `status`, `detail`) for a SCIM one.
 */
const exampleError = (status: string, response: Json, components: Json) => {
  for (const media of Object.values(response.content ?? {}) as Array<Json>) {
    if (media.example !== undefined || media.examples !== undefined) continue
    // One error, or several sharing the status (`anyOf`): the first is the example.
    const refs: Array<unknown> = media.schema?.anyOf ?? media.schema?.oneOf ?? [media.schema]
    const ref = refs.find((schema): schema is { $ref: string } => typeof (schema as Json)?.$ref === "string")
    const schema = ref === undefined ? undefined : components[ref.$ref.slice("#/components/schemas/".length)]
    const tag = schema?.properties?._tag?.enum?.[0]
    const keys = Object.keys(schema?.properties ?? {})
    const description = schema?.description ?? response.description.split(" | ")[0]
    if (typeof tag === "string" && keys.length === 2 && keys.includes("error")) {
      media.example = { _tag: tag, error: description }
    } else if (["schemas", "status", "detail"].every((key) => keys.includes(key))) {
      media.example = {
        ...(typeof tag === "string" ? { _tag: tag } : {}),
        schemas: [scimErrorUrn],
        status,
        detail: description
      }
    }
  }
}

const notBuiltDescription = "Not built in this release: every call answers 501 `{\"error\": \"not implemented\"}`."

const transformOperation = (path: string, method: string, operation: Json, components: Json, opened: Set<string>) => {
  const responses: Json = operation.responses ?? {}
  if (operation.description === undefined && responses["501"] !== undefined) {
    operation.description = notBuiltDescription
  }
  if (operation.requestBody !== undefined) {
    for (const media of Object.values(operation.requestBody.content ?? {}) as Array<Json>) {
      openRequestSchema(media.schema, components, opened)
    }
    responses["413"] ??= { $ref: "#/components/responses/PayloadTooLarge" }
    responses["415"] ??= { $ref: "#/components/responses/UnsupportedMediaType" }
  } else if (method !== "get" && method !== "head") {
    // An operation that reads no body still refuses one that is not JSON (no cross-site form can send it).
    responses["415"] ??= { $ref: "#/components/responses/UnsupportedMediaTypeWithoutBody" }
  }
  if ((operation.parameters ?? []).some((parameter: Json) => parameter.in === "path")) {
    responses["400"] ??= {
      $ref: path.startsWith("/v1/scim/")
        ? "#/components/responses/ScimMalformedPathParameter"
        : "#/components/responses/MalformedPathParameter"
    }
  }
  responses["431"] ??= {
    $ref: path.startsWith("/v1/scim/")
      ? "#/components/responses/ScimRequestHeaderFieldsTooLarge"
      : "#/components/responses/RequestHeaderFieldsTooLarge"
  }
  for (const [status, response] of Object.entries(responses) as Array<[string, Json]>) {
    exampleError(status, response, components)
  }
}

/** The transformation of the generated document (see the module comment). */
export const transformDocument = (generated: Json): Json => {
  const spec: Json = structuredClone(generated)
  spec.info = { ...spec.info, license, contact: { name: "Enterprise Agent Platform" } }
  spec.servers = [{ url: "/", description: "The service that serves this document" }]
  spec.tags = mergeTags(spec.tags ?? [])
  spec.components ??= {}
  spec.components.schemas ??= {}
  const schemas: Json = spec.components.schemas
  schemas.EdgeError = edgeErrorSchema
  spec.components.responses = { ...spec.components.responses, ...edgeResponses }
  everyObject(schemas, normalizeSchema)
  everyObject(spec.paths, normalizeSchema)
  const opened = new Set<string>()
  for (const [path, pathItem] of Object.entries(spec.paths ?? {}) as Array<[string, Json]>) {
    for (const method of methods) {
      if (pathItem[method] !== undefined) transformOperation(path, method, pathItem[method], schemas, opened)
    }
  }
  return spec
}
