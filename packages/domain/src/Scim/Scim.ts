/**
 * SCIM 2.0 resources and messages (RFC 7643/7644; spec: "SCIM resources").
 * Responses use `application/scim+json`; requests are accepted as
 * `application/scim+json` or `application/json`.
 *
 * Request bodies are open: identity providers send attributes and extension
 * schemas this service does not know, and quirks such as `active: "False"`.
 * The service accepts them, keeps what the schemas of `/Schemas` define and
 * ignores the rest, so the bodies are declared with their known fields and
 * `additionalProperties` allowed, and validated by the service.
 */
import { Schema } from "effect"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import { RoleId } from "../Auth/Session.ts"
import { EnterpriseUserSchemaUrn, GroupSchemaUrn, UserSchemaUrn } from "./ScimSchemas.ts"

export * from "./ScimErrors.ts"
export { EnterpriseUserSchemaUrn, GroupSchemaUrn, UserSchemaUrn } from "./ScimSchemas.ts"

export const ListResponseUrn = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
export const PatchOpUrn = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
export const ServiceProviderConfigUrn = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
export const ResourceTypeUrn = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
export const SchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:Schema"

/** The media type of every SCIM response (RFC 7644 §3.1). */
export const mediaType = "application/scim+json"

/** Marks a schema as a SCIM JSON body. */
export const asScim = HttpApiSchema.asJson({ contentType: mediaType })

/**
 * What RFC 7644 defines under the SCIM base that this service does not
 * provide, and what to do instead: the RFC asks for a 501 there (§3.11 for
 * `/Me`), not a 404 that reads as a wrong base URL. Undefined for any other
 * path (`/v1/scim/...`, or under the `/api` alias).
 */
export const unsupportedEndpoint = (path: string): string | undefined => {
  const match = /^(?:\/api)?\/v1\/scim\/(Me|Bulk|\.search)(?:\/.*)?$/.exec(path)
  switch (match?.[1]) {
    case "Me":
      return "/Me is not supported: a SCIM key provisions the tenant's users, it is not one; read its owner at /Users/{id}."
    case "Bulk":
      return "/Bulk is not supported (ServiceProviderConfig: bulk.supported false): send one request per operation."
    case ".search":
      return "A search across resource types is not supported: POST /Users/.search or /Groups/.search."
    default:
      return undefined
  }
}

/** The largest page a list returns (`count` above it is lowered to it: RFC 7644 §3.4.2.4). */
export const maxResults = 1000
/** The page size when `count` is not given. */
export const defaultCount = 100

const baseUrl = "https://platform.example.com/v1/scim"
const userId = "2819c223-7f76-453a-919d-413861904646"
const groupId = "e9e30dba-f08f-4109-8486-d5c6a331660a"

const userExample = {
  schemas: [UserSchemaUrn, EnterpriseUserSchemaUrn],
  id: userId,
  externalId: "00u1a2b3c4D5e6F7g8h9",
  userName: "ana.garcia@example.com",
  name: { givenName: "Ana", familyName: "García", formatted: "Ana García" },
  displayName: "Ana García",
  emails: [{ value: "ana.garcia@example.com", type: "work", primary: true }],
  active: true,
  groups: [{ value: groupId, display: "Support" }],
  [EnterpriseUserSchemaUrn]: { department: "Customer care" },
  meta: {
    resourceType: "User",
    created: "2026-03-02T09:15:00.000Z",
    lastModified: "2026-03-04T16:40:12.000Z",
    location: `${baseUrl}/Users/${userId}`,
    version: "W/\"7f3b0c9e2d4a6b8c1e5f7a9b0c2d4e6f\""
  }
}

const groupExample = {
  schemas: [GroupSchemaUrn],
  id: groupId,
  externalId: "00g9h8g7f6E5d4C3b2a1",
  displayName: "Support",
  members: [{ value: userId, display: "Ana García" }],
  meta: {
    resourceType: "Group",
    created: "2026-03-02T09:15:05.000Z",
    lastModified: "2026-03-04T16:40:12.000Z",
    location: `${baseUrl}/Groups/${groupId}`,
    version: "W/\"0a1b2c3d4e5f60718293a4b5c6d7e8f9\""
  }
}

const schemaExample = {
  schemas: [SchemaUrn],
  id: GroupSchemaUrn,
  name: "Group",
  description: "Group",
  attributes: [{
    name: "displayName",
    type: "string",
    multiValued: false,
    required: true,
    caseExact: false,
    mutability: "readWrite",
    returned: "default",
    uniqueness: "server"
  }]
}

const resourceTypeExample = {
  schemas: [ResourceTypeUrn],
  id: "User",
  name: "User",
  endpoint: "/Users",
  description: "User Account",
  schema: UserSchemaUrn,
  schemaExtensions: [{ schema: EnterpriseUserSchemaUrn, required: false }]
}

/** One example of each resource, for the example pages of their lists. */
export const examples = {
  user: userExample,
  group: groupExample,
  schema: schemaExample,
  resourceType: resourceTypeExample
}

/** An object that keeps every key it is sent. */
const open = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.StructWithRest(Schema.Struct(fields), [Schema.Record(Schema.String, Schema.Unknown)])

const Meta = Schema.Struct({
  resourceType: Schema.String,
  created: Schema.String.annotate({ format: "date-time" }),
  lastModified: Schema.String.annotate({ format: "date-time" }),
  location: Schema.String.annotate({ format: "uri" }),
  version: Schema.String.annotate({ description: "Weak entity tag, the same as the ETag header: send it in If-Match." })
})

const Name = open({
  formatted: Schema.optionalKey(Schema.String),
  givenName: Schema.optionalKey(Schema.String),
  familyName: Schema.optionalKey(Schema.String)
})

const MultiValue = open({
  value: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.String),
  primary: Schema.optionalKey(Schema.Union([Schema.Boolean, Schema.String])),
  display: Schema.optionalKey(Schema.String)
})

const Member = open({
  value: Schema.String.annotate({ description: "The id of a user of the tenant." }),
  display: Schema.optionalKey(Schema.String),
  $ref: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.String)
})

const BooleanLike = Schema.Union([Schema.Boolean, Schema.String]).annotate({
  description: "A boolean; the strings \"True\" and \"False\" (any case) are accepted as sent by Microsoft Entra ID."
})

/**
 * The `schemas` of a POST or PUT body: required, and listing the resource's
 * core schema URN (any case), as PatchOp and SearchRequest bodies name theirs;
 * a body without it, or of another resource type, is a 400 invalidSyntax
 * naming the URN. Okta, Entra ID and OneLogin always send it.
 */
const schemasListing = (urn: string, resource: string) => {
  const message = `A ${resource} body's schemas must list ${urn}.`
  return Schema.Array(Schema.String).annotate({ message }).check(
    Schema.makeFilter((schemas) => schemas.some((schema) => schema.toLowerCase() === urn.toLowerCase()) || message, {
      description: `Must list ${urn}.`
    })
  ).pipe(Schema.annotateKey({ messageMissingKey: message, description: `Required: must list \`${urn}\`.` }))
}

/** A User as returned (RFC 7643 §4.1): `id` and `schemas` always, the rest unless excluded by `attributes`/`excludedAttributes`. */
export const ScimUser = open({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  externalId: Schema.optionalKey(Schema.String),
  userName: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Name),
  displayName: Schema.optionalKey(Schema.String),
  emails: Schema.optionalKey(Schema.Array(MultiValue)),
  active: Schema.optionalKey(Schema.Boolean),
  groups: Schema.optionalKey(Schema.Array(Member)),
  [EnterpriseUserSchemaUrn]: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  meta: Schema.optionalKey(Meta)
}).annotate({
  identifier: "ScimUser",
  description: `A User (${UserSchemaUrn}), with the Enterprise User extension when set.`,
  examples: [userExample]
})
export type ScimUser = typeof ScimUser.Type

/** A User as sent on POST and PUT; validated and normalized by the service, unknown attributes ignored. */
export const ScimUserInput = open({
  schemas: schemasListing(UserSchemaUrn, "User"),
  userName: Schema.optionalKey(Schema.String).annotate({ description: "Required." }),
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  name: Schema.optionalKey(Name),
  displayName: Schema.optionalKey(Schema.String),
  emails: Schema.optionalKey(Schema.Array(MultiValue)),
  active: Schema.optionalKey(BooleanLike),
  password: Schema.optionalKey(Schema.String.annotate({
    format: "password",
    description: "Write-only; checked against the tenant's password policy."
  })),
  [EnterpriseUserSchemaUrn]: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({
  identifier: "ScimUserInput",
  examples: [{
    schemas: [UserSchemaUrn],
    userName: "ana.garcia@example.com",
    externalId: "00u1a2b3c4D5e6F7g8h9",
    name: { givenName: "Ana", familyName: "García" },
    emails: [{ value: "ana.garcia@example.com", type: "work", primary: true }],
    active: "True"
  }]
})

/** A Group as returned (RFC 7643 §4.2). */
export const ScimGroup = open({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  externalId: Schema.optionalKey(Schema.String),
  displayName: Schema.optionalKey(Schema.String),
  members: Schema.optionalKey(Schema.Array(Member)),
  meta: Schema.optionalKey(Meta)
}).annotate({ identifier: "ScimGroup", description: `A Group (${GroupSchemaUrn}).`, examples: [groupExample] })
export type ScimGroup = typeof ScimGroup.Type

/** A Group as sent on POST and PUT. */
export const ScimGroupInput = open({
  schemas: schemasListing(GroupSchemaUrn, "Group"),
  displayName: Schema.optionalKey(Schema.String).annotate({ description: "Required." }),
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  members: Schema.optionalKey(Schema.Array(Member))
}).annotate({
  identifier: "ScimGroupInput",
  examples: [{
    schemas: [GroupSchemaUrn],
    displayName: "Support",
    externalId: "00g9h8g7f6E5d4C3b2a1",
    members: [{ value: userId }]
  }]
})

/** A PatchOp message (RFC 7644 §3.5.2); `op` is accepted in any case (Entra sends "Replace"). */
export const PatchOp = open({
  schemas: Schema.optionalKey(Schema.Array(Schema.String)),
  Operations: Schema.optionalKey(Schema.Array(open({
    op: Schema.String.annotate({ description: "add, replace or remove (any case)." }),
    path: Schema.optionalKey(Schema.String),
    value: Schema.optionalKey(Schema.Unknown)
  })))
}).annotate({
  identifier: "ScimPatchOp",
  examples: [{
    schemas: [PatchOpUrn],
    Operations: [
      { op: "Replace", path: "active", value: "False" },
      { op: "add", path: "members", value: [{ value: userId }] },
      { op: "remove", path: `members[value eq "${userId}"]` }
    ]
  }]
})

/**
 * Query parameters of a list (RFC 7644 §3.4.2). Numbers are parsed by the
 * service so that out-of-range values follow the RFC (startIndex < 1 is 1,
 * count < 0 is 0, count > 1000 is 1000) and garbage is a SCIM 400.
 */
export const ListQuery = {
  filter: Schema.optionalKey(Schema.String.annotate({
    description:
      "RFC 7644 §3.4.2.2 filter: eq ne co sw ew pr gt ge lt le, and/or/not, (grouping), value paths such as `emails[type eq \"work\"].value eq \"x\"`. String comparisons are case-insensitive except for id and externalId."
  })),
  startIndex: Schema.optionalKey(
    Schema.String.annotate({ description: "1-based index of the first result (integer, default 1)." })
  ),
  count: Schema.optionalKey(Schema.String.annotate({
    description: `Page size (integer 0-${maxResults}, default ${defaultCount}); 0 returns totalResults only.`
  })),
  sortBy: Schema.optionalKey(
    Schema.String.annotate({ description: "A single-valued attribute to sort by, e.g. `userName` or `meta.created`." })
  ),
  sortOrder: Schema.optionalKey(Schema.String.annotate({ description: "ascending (default) or descending." })),
  attributes: Schema.optionalKey(
    Schema.String.annotate({ description: "Comma-separated attributes to return (id and schemas always are)." })
  ),
  excludedAttributes: Schema.optionalKey(
    Schema.String.annotate({ description: "Comma-separated attributes to leave out, e.g. `members`." })
  )
}

/** The URN of a query sent as a body (RFC 7644 §3.4.3). */
export const SearchRequestUrn = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

/** The longest `filter` a search body may carry: about what a GET's 8 KiB request target leaves for one. */
export const maxFilterLength = 8000

const attributeNames = Schema.Array(Schema.String.check(Schema.isMaxLength(512))).check(Schema.isMaxLength(200))

/**
 * A list query sent as a body, `POST /Users/.search` or `/Groups/.search`
 * (RFC 7644 §3.4.3): the same filter, sort, page and projection as a GET's
 * query, with `attributes` and `excludedAttributes` as arrays and the numbers
 * as JSON integers. `schemas`, when given, must name the SearchRequest URN.
 */
export const SearchRequest = open({
  schemas: Schema.optionalKey(Schema.Array(Schema.String)).annotate({ description: `\`["${SearchRequestUrn}"]\`` }),
  filter: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(maxFilterLength))).annotate({
    description: "RFC 7644 §3.4.2.2 filter, as in a GET's `filter`."
  }),
  startIndex: Schema.optionalKey(Schema.Int).annotate({
    description: "1-based index of the first result (default 1)."
  }),
  count: Schema.optionalKey(Schema.Int).annotate({
    description: `Page size (0-${maxResults}, default ${defaultCount}); 0 returns totalResults only.`
  }),
  sortBy: Schema.optionalKey(Schema.String),
  sortOrder: Schema.optionalKey(Schema.String).annotate({ description: "ascending (default) or descending." }),
  attributes: Schema.optionalKey(attributeNames).annotate({
    description: "Attributes to return (id and schemas always are)."
  }),
  excludedAttributes: Schema.optionalKey(attributeNames).annotate({ description: "Attributes to leave out." })
}).annotate({
  identifier: "ScimSearchRequest",
  examples: [{
    schemas: [SearchRequestUrn],
    filter: "userName sw \"ada\" and active eq true",
    sortBy: "userName",
    startIndex: 1,
    count: 10,
    attributes: ["userName", "name.familyName"]
  }]
})

/** `attributes` / `excludedAttributes` on single-resource reads and writes. */
export const ProjectionQuery = {
  attributes: ListQuery.attributes,
  excludedAttributes: ListQuery.excludedAttributes
}

/** `If-Match` on writes: a stale version answers 412 (RFC 7644 §3.14). */
export const IfMatchHeaders = {
  "if-match": Schema.optionalKey(Schema.String.annotate({
    description: "The resource's ETag (meta.version) as last read, or *; a stale one answers 412."
  }))
}

/** A list of `resource`s, with an example page holding `example` when given. */
export const listResponse = <S extends Schema.Top>(resource: S, identifier: string, example?: S["Type"]) =>
  Schema.Struct({
    schemas: Schema.Array(Schema.String),
    totalResults: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(2_147_483_647)),
    startIndex: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(2_147_483_647)),
    itemsPerPage: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(maxResults)),
    Resources: Schema.Array(resource)
  }).annotate({
    identifier,
    ...(example === undefined ? {} : {
      examples: [{ schemas: [ListResponseUrn], totalResults: 1, startIndex: 1, itemsPerPage: 1, Resources: [example] }]
    })
  })

/** What this service supports, as `/ServiceProviderConfig` states it (and its example in the API description). */
export const serviceProviderFeatures = {
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults },
  // A `password` in POST, PUT or PATCH sets it (Okta's password sync), checked against the tenant's policy.
  changePassword: { supported: true },
  sort: { supported: true },
  etag: { supported: true }
} as const

/** How a SCIM client authenticates: an API key with the `scim` scope. */
export const bearerScheme = {
  type: "oauthbearertoken",
  name: "OAuth Bearer Token",
  description:
    "An API key with the scope scim, sent as Authorization: Bearer sk_live_... (create one with `agent-platform scim token create`).",
  primary: true
} as const

/** `/ServiceProviderConfig` (RFC 7643 §5). */
export const ServiceProviderConfig = open({
  schemas: Schema.Array(Schema.String),
  patch: Schema.Struct({ supported: Schema.Boolean }),
  bulk: Schema.Struct({ supported: Schema.Boolean, maxOperations: Schema.Int, maxPayloadSize: Schema.Int }),
  filter: Schema.Struct({ supported: Schema.Boolean, maxResults: Schema.Int }),
  changePassword: Schema.Struct({ supported: Schema.Boolean }),
  sort: Schema.Struct({ supported: Schema.Boolean }),
  etag: Schema.Struct({ supported: Schema.Boolean }),
  authenticationSchemes: Schema.Array(open({ type: Schema.String, name: Schema.String, description: Schema.String }))
}).annotate({
  identifier: "ScimServiceProviderConfig",
  examples: [{ schemas: [ServiceProviderConfigUrn], ...serviceProviderFeatures, authenticationSchemes: [bearerScheme] }]
})

/** A `/Schemas` entry (RFC 7643 §7): the attribute tree as data. */
export const ScimSchemaResource = open({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  attributes: Schema.Array(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({
  identifier: "ScimSchema",
  examples: [schemaExample]
})

/** A `/ResourceTypes` entry (RFC 7643 §6). */
export const ScimResourceType = open({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  name: Schema.String,
  endpoint: Schema.String,
  description: Schema.String,
  schema: Schema.String,
  schemaExtensions: Schema.Array(Schema.Struct({ schema: Schema.String, required: Schema.Boolean }))
}).annotate({
  identifier: "ScimResourceType",
  examples: [resourceTypeExample]
})

/** One group-to-role rule: members of the group named `group_display_name` (case-insensitive) get `role_id`. */
export const RoleMapping = Schema.Struct({
  group_display_name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)),
  role_id: RoleId.annotate({
    description: "r_user, r_admin, r_security_officer or r_space_admin (r_superadmin cannot be granted through SCIM)."
  })
}).annotate({ identifier: "ScimRoleMapping" })
export type RoleMapping = typeof RoleMapping.Type

export const RoleMappings = Schema.Struct({
  mappings: Schema.Array(RoleMapping).check(Schema.isMaxLength(200))
}).annotate({
  identifier: "ScimRoleMappings",
  examples: [{
    mappings: [
      { group_display_name: "Platform Admins", role_id: "r_admin" },
      { group_display_name: "Security", role_id: "r_security_officer" }
    ]
  }]
})
export type RoleMappings = typeof RoleMappings.Type
