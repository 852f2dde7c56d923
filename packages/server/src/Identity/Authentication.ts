/**
 * The authentication middlewares of the two interfaces, and of SCIM.
 *
 * - `/v1` (ApiKeyAuth): a Bearer API key, its scopes against the endpoint's
 *   `RequiredScopes`, and its rate limits (the stricter of the key's
 *   `rate_limit_rpm` and the endpoint class's limit).
 * - `/api` (SessionAuth): the session cookie and the endpoint's
 *   `RequiredRole`. When a Bearer key is sent too, the key alone decides
 *   (spec: "the API key takes precedence"): invalid → 401, valid → 403, since
 *   session endpoints refuse API keys.
 */
import {
  ApiKeyAuth,
  CurrentPrincipal,
  Errors,
  type KeyPrincipal,
  RateLimitClass,
  RequiredRole,
  RequiredScopes,
  Scim,
  ScimAuth,
  SessionAuth
} from "@agent-platform/domain"
import { Context, Effect, Layer, Redacted } from "effect"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as NetAddress from "effect/net/NetAddress"
import { roleDescription, roleSatisfies } from "../Access/Roles.ts"
import { readSessionToken, setSessionCookie } from "../Auth/SessionCookie.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { ApiKeys } from "../Keys/ApiKeys.ts"
import type { KeyVerdict } from "../Keys/VerifiedKeys.ts"
import { clientIp } from "../Platform/ClientIp.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { type Eager, toEffect } from "../Platform/Eager.ts"
import { exceededMessage, type RateLimitOutcome, RateLimits, setLimitHeaders } from "../Platform/RateLimits.ts"
import { CurrentRequestInfo, type RequestInfo } from "../Platform/RequestInfo.ts"
import { IpAllowlist } from "../SecurityPolicies/IpAllowlist.ts"

const bearerOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers.authorization
  if (header === undefined) return undefined
  const match = /^Bearer\s+(.+)$/i.exec(header.trim())
  return match === null ? header.trim() : match[1].trim()
}

type Outcome =
  | { readonly _tag: "Ok"; readonly principal: KeyPrincipal }
  | { readonly _tag: "Unauthenticated"; readonly error: string }
  | { readonly _tag: "AccountBlocked"; readonly error: string }
  | { readonly _tag: "ScopeMissing"; readonly error: string }
  | { readonly _tag: "RateLimited"; readonly error: string }

const missingKey: Outcome = {
  _tag: "Unauthenticated",
  error: "Missing API key: send Authorization: Bearer sk_live_..."
}

/**
 * Verifies a key, its scopes and its rate limits for an endpoint; headers of
 * the limit go on the response. The services are resolved once, when the
 * middleware is built: a request only reads its own `RequestInfo`.
 *
 * The outcome is a plain value when nothing had to wait — a key this replica
 * holds a verdict for, and limits in memory or already refused: the common
 * case, decided without a step of the effect runtime — else an effect.
 */
const makeAuthorizeKey = (keys: ApiKeys["Service"], limits: RateLimits["Service"]) => {
  const limited = (principal: KeyPrincipal, limit: RateLimitOutcome, info: RequestInfo): Outcome => {
    setLimitHeaders(info, limit)
    return limit.allowed ? { _tag: "Ok", principal } : { _tag: "RateLimited", error: exceededMessage(limit) }
  }
  const decide = (
    verdict: KeyVerdict,
    endpoint: HttpApiEndpoint.Top,
    info: RequestInfo
  ): Eager<Outcome> => {
    if (verdict._tag === "KeyRefused") return { _tag: verdict.answer, error: verdict.error }
    info.tenantId = verdict.tenantId
    const required = Context.get(endpoint.annotations, RequiredScopes)
    if (required.length > 0 && !required.some((scope) => verdict.scopes.includes(scope))) {
      return {
        _tag: "ScopeMissing",
        error: `This endpoint needs the scope ${required.map((s) => `\`${s}\``).join(" or ")}; the key has ${
          verdict.scopes.length === 0 ? "none" : verdict.scopes.map((s) => `\`${s}\``).join(", ")
        }. Create a key with it.`
      }
    }
    const options = {
      keyId: verdict.keyId,
      keyRpm: verdict.rateLimitRpm,
      limitClass: Context.get(endpoint.annotations, RateLimitClass)
    }
    const limit = limits.consumeEager(options)
    return Effect.isEffect(limit)
      ? Effect.map(limit, (limit) => limited(verdict, limit, info))
      : limited(verdict, limit, info)
  }
  return (key: string, endpoint: HttpApiEndpoint.Top, info: RequestInfo): Eager<Outcome> => {
    if (key.length === 0) return missingKey
    const verdict = keys.verifyEager(key)
    return Effect.isEffect(verdict)
      ? Effect.flatMap(verdict, (verdict) => toEffect(decide(verdict, endpoint, info)))
      : decide(verdict, endpoint, info)
  }
}

/** What a key middleware wraps: the endpoint's handling, which needs the principal. */
type KeyMiddlewareInput = Parameters<(typeof ApiKeyAuth)["Service"]["apiKey"]>[0]

/**
 * A Bearer-key middleware answering refusals with the given errors: the
 * contract's `{error}` bodies for `/v1`, SCIM's own error schema for SCIM.
 */
const keyMiddleware = <E1, E2, E3, E4>(refuse: {
  readonly unauthenticated: (error: string) => E1
  readonly accountBlocked: (error: string) => E4
  readonly scopeMissing: (error: string) => E2
  readonly rateLimited: (error: string) => E3
}) =>
  Effect.gen(function*() {
    const authorizeKey = makeAuthorizeKey(yield* ApiKeys, yield* RateLimits)
    return (
      httpEffect: KeyMiddlewareInput,
      { credential, endpoint }: { readonly credential: Redacted.Redacted; readonly endpoint: HttpApiEndpoint.Top }
    ) =>
      // The request's info is read off the fiber: one step fewer on every `/v1` request.
      Effect.withFiber((fiber) => {
        const respond = (outcome: Outcome): Effect.Effect<
          Effect.Success<KeyMiddlewareInput>,
          Effect.Error<KeyMiddlewareInput> | E1 | E2 | E3 | E4
        > => {
          switch (outcome._tag) {
            case "Ok":
              return Effect.provideService(httpEffect, CurrentPrincipal, outcome.principal)
            case "Unauthenticated":
              return Effect.fail(refuse.unauthenticated(outcome.error))
            case "AccountBlocked":
              return Effect.fail(refuse.accountBlocked(outcome.error))
            case "ScopeMissing":
              return Effect.fail(refuse.scopeMissing(outcome.error))
            case "RateLimited":
              return Effect.fail(refuse.rateLimited(outcome.error))
          }
        }
        const outcome = authorizeKey(Redacted.value(credential), endpoint, fiber.getRef(CurrentRequestInfo))
        return Effect.isEffect(outcome) ? Effect.flatMap(outcome, respond) : respond(outcome)
      })
  })

export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.map(
    keyMiddleware({
      unauthenticated: (error) => new Errors.Unauthenticated({ error }),
      accountBlocked: (error) => new Errors.AccountBlocked({ error }),
      scopeMissing: (error) => new Errors.ScopeMissing({ error }),
      rateLimited: (error) => new Errors.RateLimited({ error })
    }),
    (apiKey) => ApiKeyAuth.of({ apiKey })
  )
)

export const ScimAuthLive = Layer.effect(
  ScimAuth,
  Effect.map(
    keyMiddleware({
      unauthenticated: (error) => new Scim.ScimUnauthorized(Scim.scimError(401, error)),
      accountBlocked: (error) => new Scim.ScimForbidden(Scim.scimError(403, error)),
      scopeMissing: (error) => new Scim.ScimForbidden(Scim.scimError(403, error)),
      // RFC 7644 defines no scimType for a 429 (its `tooMany` is a 400 for a filter with too many results).
      rateLimited: (error) => new Scim.ScimRateLimited(Scim.scimError(429, error))
    }),
    (apiKey) => ScimAuth.of({ apiKey })
  )
)

export const SessionAuthLive = Layer.effect(
  SessionAuth,
  Effect.gen(function*() {
    // Resolved once: a request provides nothing but its principal.
    const keys = yield* ApiKeys
    const sessions = yield* Sessions
    const allowlist = yield* IpAllowlist
    const config = yield* ServerConfig
    const requestIp = Effect.provideService(clientIp, ServerConfig, config)
    return SessionAuth.of({
      session: (httpEffect, { endpoint }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const info = yield* CurrentRequestInfo
          const bearer = bearerOf(request)
          if (bearer !== undefined) {
            const key = yield* keys.verify(bearer)
            if (key._tag === "KeyRefused") {
              if (key.answer === "Unauthenticated") return yield* new Errors.Unauthenticated({ error: key.error })
              if (key.answer === "AccountBlocked") return yield* new Errors.AccountBlocked({ error: key.error })
              // A key its owner's role no longer covers: refused below like any key, as session endpoints take none.
            }
            return yield* new Errors.SessionRequired({
              error: "This endpoint needs a signed-in session and refuses API keys: sign in with POST /api/auth/login."
            })
          }
          const token = readSessionToken(request)
          if (token === undefined) {
            return yield* new Errors.Unauthenticated({ error: "Not signed in: POST /api/auth/login first." })
          }
          const verified = yield* sessions.verify(token).pipe(Effect.orDie)
          if (verified === undefined) {
            return yield* new Errors.Unauthenticated({ error: "Session expired or ended: sign in again." })
          }
          const { principal } = verified
          info.tenantId = principal.tenantId
          const ip = yield* requestIp
          if (!(yield* allowlist.isAllowed(principal.tenantId, ip).pipe(Effect.orDie))) {
            return yield* new Errors.IpNotAllowed({
              error: `Your IP address (${
                ip === undefined ? "unknown" : NetAddress.formatIp(ip)
              }) is outside your organization's IP allowlist: connect from an allowed network, or ask an administrator to add this address.`
            })
          }
          const requirement = Context.get(endpoint.annotations, RequiredRole)
          if (!roleSatisfies(requirement, principal)) {
            return yield* new Errors.RoleMissing({ error: `This endpoint needs ${roleDescription[requirement]}.` })
          }
          if (verified.renewed !== undefined) {
            yield* setSessionCookie(verified.renewed.token, verified.renewed.maxAgeSeconds).pipe(
              Effect.provideService(ServerConfig, config)
            )
          }
          return yield* Effect.provideService(httpEffect, CurrentPrincipal, principal)
        })
    })
  })
)

export const AuthenticationLive = Layer.mergeAll(ApiKeyAuthLive, SessionAuthLive, ScimAuthLive)
