/**
 * Errors shared by every group of the API.
 *
 * Each error is a Schema tagged error carrying its HTTP status, so the server,
 * the derived SDK client and the OpenAPI description all get it from here. The
 * body always has the contract's `error` string (spec: "The general error body
 * is `{error: string}`"); `_tag` names the error so SDK users can match on it.
 */
import { Schema } from "effect"
import { AnswerError } from "./AnswerError.ts"

const body = { error: Schema.String }

/** 400: a payload, query, path parameter or header failed validation. */
export class InvalidRequest extends AnswerError<InvalidRequest>()("InvalidRequest", body, {
  httpApiStatus: 400,
  description: "The request is malformed or fails validation; `error` names the offending field."
}) {}

/** 401: no valid credential (API key or session) was presented. */
export class Unauthenticated extends AnswerError<Unauthenticated>()("Unauthenticated", body, {
  httpApiStatus: 401,
  description: "Missing, invalid, expired or revoked credentials."
}) {}

/** 403: the credential is valid but lacks a scope. */
export class ScopeMissing extends AnswerError<ScopeMissing>()("ScopeMissing", body, {
  httpApiStatus: 403,
  description: "The API key lacks the scope this endpoint needs; `error` names it."
}) {}

/** 403: the signed-in user lacks the role this endpoint needs. */
export class RoleMissing extends AnswerError<RoleMissing>()("RoleMissing", body, {
  httpApiStatus: 403,
  description: "The signed-in user lacks the role this endpoint needs."
}) {}

/** 403: the endpoint needs a signed-in session and an API key was presented. */
export class SessionRequired extends AnswerError<SessionRequired>()("SessionRequired", body, {
  httpApiStatus: 403,
  description: "This endpoint needs a signed-in session; API keys are refused here."
}) {}

/** 403: a tenant feature flag is off. */
export class FeatureDisabled extends AnswerError<FeatureDisabled>()("FeatureDisabled", body, {
  httpApiStatus: 403,
  description: "The tenant feature flag this endpoint belongs to is off."
}) {}

/** 403: the caller's IP is outside the tenant's allowlist. */
export class IpNotAllowed extends AnswerError<IpNotAllowed>()("IpNotAllowed", body, {
  httpApiStatus: 403,
  description: "The client IP address is outside the tenant's IP allowlist."
}) {}

/** 403: the account is blocked (locked out, or blocked by an administrator). */
export class AccountBlocked extends AnswerError<AccountBlocked>()("AccountBlocked", body, {
  httpApiStatus: 403,
  description: "The account is blocked or temporarily locked out."
}) {}

/** 403: the caller may not act on this resource (e.g. not a participant). */
export class AccessDenied extends AnswerError<AccessDenied>()("AccessDenied", body, {
  httpApiStatus: 403,
  description: "The caller may not act on this resource."
}) {}

/** 404: the resource does not exist, or belongs to another tenant (never 403 across tenants). */
export class NotFound extends AnswerError<NotFound>()("NotFound", body, {
  httpApiStatus: 404,
  description: "The resource does not exist or belongs to another tenant."
}) {}

/** 409: the resource is not in a state that allows the operation. */
export class Conflict extends AnswerError<Conflict>()("Conflict", body, {
  httpApiStatus: 409,
  description: "The resource's current state does not allow this operation."
}) {}

/** 405: the path exists, the method does not; the `Allow` header lists the methods it answers. */
export class MethodNotAllowed extends AnswerError<MethodNotAllowed>()("MethodNotAllowed", body, {
  httpApiStatus: 405,
  description: "The path does not answer this method; `Allow` lists the ones it does."
}) {}

/** 408: the client did not send its request in time (slow headers or body). */
export class RequestTimeout extends AnswerError<RequestTimeout>()("RequestTimeout", body, {
  httpApiStatus: 408,
  description: "The request was not received in time."
}) {}

/** 412: the password expired or must be changed before signing in. */
export class PasswordChangeRequired extends AnswerError<PasswordChangeRequired>()(
  "PasswordChangeRequired",
  body,
  {
    httpApiStatus: 412,
    description: "The password expired or must be changed: call POST /api/auth/change-password."
  }
) {}

/** 413: the request body is larger than the server accepts. */
export class PayloadTooLarge extends AnswerError<PayloadTooLarge>()("PayloadTooLarge", body, {
  httpApiStatus: 413,
  description: "The request body exceeds the size limit."
}) {}

/** 414: the request URL is too long. */
export class UriTooLong extends AnswerError<UriTooLong>()("UriTooLong", body, {
  httpApiStatus: 414,
  description: "The request URL exceeds 8 KiB."
}) {}

/** 415: the body is not JSON where JSON is expected. */
export class UnsupportedMediaType extends AnswerError<UnsupportedMediaType>()("UnsupportedMediaType", body, {
  httpApiStatus: 415,
  description: "The body's Content-Type is not JSON; send application/json."
}) {}

/** 429: one client address holds too many open connections. */
export class TooManyConnections extends AnswerError<TooManyConnections>()("TooManyConnections", body, {
  httpApiStatus: 429,
  description: "Too many open connections from this address (MAX_CONNECTIONS_PER_IP)."
}) {}

/** 431: the request headers (with the request line) are too large. */
export class HeadersTooLarge extends AnswerError<HeadersTooLarge>()("HeadersTooLarge", body, {
  httpApiStatus: 431,
  description: "The request headers exceed 16 KiB."
}) {}

/**
 * 429: a rate limit was exceeded. The response carries `Retry-After` and
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` headers.
 */
export class RateLimited extends AnswerError<RateLimited>()("RateLimited", body, {
  httpApiStatus: 429,
  description: "Rate limit exceeded; retry after the number of seconds in the `Retry-After` header."
}) {}

/** 501: the endpoint is declared in the contract but not built yet. */
export class NotImplemented extends AnswerError<NotImplemented>()("NotImplemented", body, {
  httpApiStatus: 501,
  description: "Declared in the contract but not implemented by this release."
}) {}

/** 500: a fault of the service; `error` carries the request id to report. */
export class InternalServerError extends AnswerError<InternalServerError>()("InternalServerError", body, {
  httpApiStatus: 500,
  description: "The service failed; report the request id in `error` to the operator."
}) {}

/** 502: an upstream system failed. */
export class UpstreamFailed extends AnswerError<UpstreamFailed>()("UpstreamFailed", body, {
  httpApiStatus: 502,
  description: "An upstream system failed."
}) {}

/** 503: a dependency (database, key-value store) is unavailable. */
export class ServiceUnavailable extends AnswerError<ServiceUnavailable>()("ServiceUnavailable", body, {
  httpApiStatus: 503,
  description: "A dependency of the service is unavailable; retry later."
}) {}

/** The message of the 501 every not-yet-built endpoint answers with. */
export const notImplemented = () => new NotImplemented({ error: "not implemented" })
