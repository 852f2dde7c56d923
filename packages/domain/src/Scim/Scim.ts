/**
 * SCIM 2.0 resources (RFC 7643/7644; spec: "SCIM resources"). Responses use
 * `application/scim+json`; requests are accepted as `application/scim+json`
 * or `application/json`.
 */
import { Schema } from "effect"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"

export const UserSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:User"
export const GroupSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:Group"
export const ListResponseUrn = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
export const PatchOpUrn = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
export const ErrorUrn = "urn:ietf:params:scim:api:messages:2.0:Error"

/** Marks a schema as a SCIM JSON body. */
export const asScim = HttpApiSchema.asJson({ contentType: "application/scim+json" })

const Meta = Schema.Struct({
  resourceType: Schema.String,
  created: Schema.optionalKey(Schema.String),
  lastModified: Schema.optionalKey(Schema.String),
  location: Schema.optionalKey(Schema.String)
})

const Name = Schema.Struct({
  formatted: Schema.optionalKey(Schema.String),
  givenName: Schema.optionalKey(Schema.String),
  familyName: Schema.optionalKey(Schema.String)
})

const EmailEntry = Schema.Struct({
  value: Schema.String,
  primary: Schema.optionalKey(Schema.Boolean),
  type: Schema.optionalKey(Schema.String)
})

export const ScimUser = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  userName: Schema.String,
  name: Name,
  displayName: Schema.String,
  emails: Schema.optionalKey(Schema.Array(EmailEntry)),
  active: Schema.Boolean,
  meta: Meta
}).annotate({ identifier: "ScimUser" })
export type ScimUser = typeof ScimUser.Type

export const ScimUserInput = Schema.Struct({
  schemas: Schema.optionalKey(Schema.Array(Schema.String)),
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  userName: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(254)),
  name: Schema.optionalKey(Name),
  displayName: Schema.optionalKey(Schema.String),
  emails: Schema.optionalKey(Schema.Array(EmailEntry)),
  active: Schema.optionalKey(Schema.Boolean)
})

export const ScimGroup = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  displayName: Schema.String,
  members: Schema.Array(Schema.Struct({ value: Schema.String, display: Schema.optionalKey(Schema.String) })),
  meta: Meta
}).annotate({ identifier: "ScimGroup" })

export const ScimGroupInput = Schema.Struct({
  schemas: Schema.optionalKey(Schema.Array(Schema.String)),
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  displayName: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)),
  members: Schema.optionalKey(Schema.Array(Schema.Struct({ value: Schema.String })))
})

export const PatchOp = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  Operations: Schema.Array(Schema.Struct({
    op: Schema.String,
    path: Schema.optionalKey(Schema.String),
    value: Schema.optionalKey(Schema.Unknown)
  })).check(Schema.isMinLength(1))
})

export const ListQuery = {
  filter: Schema.optionalKey(Schema.String),
  startIndex: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  count: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(200)))
}

export const listResponse = <S extends Schema.Top>(resource: S) =>
  Schema.Struct({
    schemas: Schema.Array(Schema.String),
    totalResults: Schema.Int,
    startIndex: Schema.Int,
    itemsPerPage: Schema.Int,
    Resources: Schema.Array(resource)
  })

const scimErrorFields = {
  schemas: Schema.Array(Schema.String),
  status: Schema.String,
  scimType: Schema.optionalKey(Schema.String),
  detail: Schema.String
}

/** SCIM errors (RFC 7644 §3.12), one class per status. */
export class ScimBadRequest extends Schema.TaggedError<ScimBadRequest>()("ScimBadRequest", scimErrorFields, { httpApiStatus: 400 }) {}
export class ScimUnauthorized extends Schema.TaggedError<ScimUnauthorized>()("ScimUnauthorized", scimErrorFields, { httpApiStatus: 401 }) {}
export class ScimForbidden extends Schema.TaggedError<ScimForbidden>()("ScimForbidden", scimErrorFields, { httpApiStatus: 403 }) {}
export class ScimNotFound extends Schema.TaggedError<ScimNotFound>()("ScimNotFound", scimErrorFields, { httpApiStatus: 404 }) {}
export class ScimConflict extends Schema.TaggedError<ScimConflict>()("ScimConflict", scimErrorFields, { httpApiStatus: 409 }) {}
export class ScimRateLimited extends Schema.TaggedError<ScimRateLimited>()("ScimRateLimited", scimErrorFields, { httpApiStatus: 429 }) {}
export class ScimNotImplemented extends Schema.TaggedError<ScimNotImplemented>()("ScimNotImplemented", scimErrorFields, { httpApiStatus: 501 }) {}

/** Builds the fields of a SCIM error body. */
export const scimError = (status: number, detail: string, scimType?: string) => ({
  schemas: [ErrorUrn],
  status: String(status),
  detail,
  ...(scimType === undefined ? {} : { scimType })
})
