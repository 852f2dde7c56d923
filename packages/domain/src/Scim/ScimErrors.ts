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

/** The fields of an error RFC 7644 gives no `scimType` (it defines them for 400, and `uniqueness` for 409). */
const { scimType: _scimType, ...untypedFields } = fields

/**
 * The `_tag` of the SCIM error answered with each status: the name of its
 * schema in the contract, carried by every SCIM error body, whether a handler
 * or the HTTP edge (malformed or invalid input, unknown routes, 405, 413,
 * 415, 500) answers it, so that a body always matches the schema the
 * OpenAPI document publishes for its status.
 */
export const errorTags = {
  400: "ScimBadRequest",
  401: "ScimUnauthorized",
  403: "ScimForbidden",
  404: "ScimNotFound",
  405: "ScimMethodNotAllowed",
  409: "ScimConflict",
  412: "ScimPreconditionFailed",
  413: "ScimPayloadTooLarge",
  414: "ScimUriTooLong",
  415: "ScimUnsupportedMediaType",
  429: "ScimRateLimited",
  500: "ScimInternalError",
  501: "ScimNotImplemented"
} as const

/** The `_tag` of a SCIM error of status `S` (`ScimError` for a status without its own). */
export type ScimErrorTag<S extends number> = S extends keyof typeof errorTags ? typeof errorTags[S] : "ScimError"

/**
 * The fields of a SCIM error body, `_tag` included. `scimType` is kept for a
 * 400 (and a 409's `uniqueness`) only: RFC 7644 §3.12 defines no other, and
 * its `tooMany` is a 400 for a filter with too many results, not a 429.
 */
export const scimError = <const S extends number>(status: S, detail: string, scimType?: ScimType) => ({
  _tag: ((errorTags as Record<number, string>)[status] ?? "ScimError") as ScimErrorTag<S>,
  schemas: [ErrorUrn],
  status: String(status),
  detail,
  ...(scimType === undefined || (status !== 400 && status !== 409) ? {} : { scimType })
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
export class ScimUnauthorized extends AnswerError<ScimUnauthorized>()("ScimUnauthorized", untypedFields, {
  httpApiStatus: 401,
  description: "Missing, invalid or revoked API key."
}) {}

/** 403: the key lacks the `scim` scope, or its owner may not change this user. */
export class ScimForbidden extends AnswerError<ScimForbidden>()("ScimForbidden", untypedFields, {
  httpApiStatus: 403,
  description:
    "The API key lacks the `scim` scope, or the key's owner may not change this user (an r_admin's key cannot change an r_superadmin)."
}) {
  static readonly of = (detail: string) => new ScimForbidden(scimError(403, detail))
}

/** 404: no such resource in the tenant (another tenant's ids answer the same). */
export class ScimNotFound extends AnswerError<ScimNotFound>()("ScimNotFound", untypedFields, {
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
export class ScimPreconditionFailed
  extends AnswerError<ScimPreconditionFailed>()("ScimPreconditionFailed", untypedFields, {
    httpApiStatus: 412,
    description: "If-Match does not match the resource's current version: read it again and retry."
  })
{
  static readonly of = (detail: string) => new ScimPreconditionFailed(scimError(412, detail))
}

/** 429: the key's rate limit is exceeded; `Retry-After` says when to retry. */
export class ScimRateLimited extends AnswerError<ScimRateLimited>()("ScimRateLimited", untypedFields, {
  httpApiStatus: 429,
  description:
    "Rate limit exceeded (300 requests per minute per key, or the key's own limit); retry after `Retry-After` seconds. No `scimType`: `detail` says when to retry."
}) {}

/** 413: the body is larger than the service accepts; answered by the HTTP edge before the endpoint runs. */
export class ScimPayloadTooLarge extends AnswerError<ScimPayloadTooLarge>()("ScimPayloadTooLarge", untypedFields, {
  httpApiStatus: 413,
  description: "The request body is larger than the service accepts (1 MiB; `MAX_BODY_BYTES`)."
}) {}

/** 415: the body's Content-Type is neither `application/scim+json` nor `application/json`; answered by the HTTP edge. */
export class ScimUnsupportedMediaType
  extends AnswerError<ScimUnsupportedMediaType>()("ScimUnsupportedMediaType", untypedFields, {
    httpApiStatus: 415,
    description: "The body is not `application/scim+json` or `application/json`: send one of those Content-Types."
  })
{}

/** 501: kept for groups a later release builds (SCIM itself is built). */
export class ScimNotImplemented extends AnswerError<ScimNotImplemented>()("ScimNotImplemented", untypedFields, {
  httpApiStatus: 501,
  description: "Not implemented by this release."
}) {}
