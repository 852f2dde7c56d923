/**
 * SCIM errors (RFC 7644 §3.12): every error under the SCIM base, including
 * those of authentication, rate limits and the HTTP edge (malformed JSON,
 * unknown routes, 405, 413, 415), is this body in `application/scim+json`.
 */
import { Schema } from "effect"
import { AnswerError } from "../AnswerError.ts"

export const ErrorUrn = "urn:ietf:params:scim:api:messages:2.0:Error"

/** The `scimType` values of RFC 7644 §3.12 (Table 9). */
export const ScimTypes = [
  "invalidFilter",
  "tooMany",
  "uniqueness",
  "mutability",
  "invalidSyntax",
  "invalidPath",
  "noTarget",
  "invalidValue",
  "invalidVers",
  "sensitive"
] as const
export type ScimType = typeof ScimTypes[number]

const fields = {
  schemas: Schema.Array(Schema.String),
  status: Schema.String.annotate({ description: "The HTTP status code, as a string." }),
  scimType: Schema.optionalKey(Schema.Literals(ScimTypes)),
  detail: Schema.String.annotate({ description: "What went wrong and what to do." })
}

/** The fields of a SCIM error body. */
export const scimError = (status: number, detail: string, scimType?: ScimType) => ({
  schemas: [ErrorUrn],
  status: String(status),
  detail,
  ...(scimType === undefined ? {} : { scimType })
})

/** 400: invalid filter, syntax, value, path or mutability (`scimType` says which). */
export class ScimBadRequest extends AnswerError<ScimBadRequest>()("ScimBadRequest", fields, {
  httpApiStatus: 400,
  description:
    "The request is invalid; `scimType` is invalidFilter, invalidSyntax, invalidValue, invalidPath, noTarget, mutability or tooMany."
}) {
  static readonly of = (scimType: ScimType, detail: string) => new ScimBadRequest(scimError(400, detail, scimType))
}

/** 401: no valid API key. */
export class ScimUnauthorized extends AnswerError<ScimUnauthorized>()("ScimUnauthorized", fields, {
  httpApiStatus: 401,
  description: "Missing, invalid or revoked API key."
}) {}

/** 403: the key lacks the `scim` scope, or its owner may not change this user. */
export class ScimForbidden extends AnswerError<ScimForbidden>()("ScimForbidden", fields, {
  httpApiStatus: 403,
  description:
    "The API key lacks the `scim` scope, or the key's owner may not change this user (an r_admin's key cannot change an r_superadmin)."
}) {
  static readonly of = (detail: string) => new ScimForbidden(scimError(403, detail))
}

/** 404: no such resource in the tenant (another tenant's ids answer the same). */
export class ScimNotFound extends AnswerError<ScimNotFound>()("ScimNotFound", fields, {
  httpApiStatus: 404,
  description: "The resource does not exist or belongs to another tenant."
}) {
  static readonly of = (detail: string) => new ScimNotFound(scimError(404, detail))
}

/** 409: a userName, email or group displayName is taken (`scimType: uniqueness`). */
export class ScimConflict extends AnswerError<ScimConflict>()("ScimConflict", fields, {
  httpApiStatus: 409,
  description: "A unique attribute is already taken (scimType uniqueness)."
}) {
  static readonly of = (detail: string) => new ScimConflict(scimError(409, detail, "uniqueness"))
}

/** 412: `If-Match` names a version the resource no longer has. */
export class ScimPreconditionFailed extends AnswerError<ScimPreconditionFailed>()("ScimPreconditionFailed", fields, {
  httpApiStatus: 412,
  description: "If-Match does not match the resource's current version: read it again and retry."
}) {
  static readonly of = (detail: string) => new ScimPreconditionFailed(scimError(412, detail))
}

/** 429: the key's rate limit is exceeded; `Retry-After` says when to retry. */
export class ScimRateLimited extends AnswerError<ScimRateLimited>()("ScimRateLimited", fields, {
  httpApiStatus: 429,
  description:
    "Rate limit exceeded (300 requests per minute per key, or the key's own limit); retry after `Retry-After` seconds."
}) {}

/** 501: kept for groups a later release builds (SCIM itself is built). */
export class ScimNotImplemented extends AnswerError<ScimNotImplemented>()("ScimNotImplemented", fields, {
  httpApiStatus: 501,
  description: "Not implemented by this release."
}) {}
