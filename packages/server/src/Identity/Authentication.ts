/**
 * The authentication middlewares of the two interfaces. Until the identity
 * release lands they refuse every request with 401.
 */
import { Effect, Layer } from "effect"
import { ApiKeyAuth, Errors, Scim, ScimAuth, SessionAuth } from "@agent-platform/domain"

const unavailable = "Authentication is not available in this release yet."

export const ApiKeyAuthLive = Layer.succeed(ApiKeyAuth, {
  apiKey: () => Effect.fail(new Errors.Unauthenticated({ error: unavailable }))
})

export const SessionAuthLive = Layer.succeed(SessionAuth, {
  session: () => Effect.fail(new Errors.Unauthenticated({ error: unavailable }))
})

export const ScimAuthLive = Layer.succeed(ScimAuth, {
  apiKey: () => Effect.fail(new Scim.ScimUnauthorized(Scim.scimError(401, unavailable)))
})

export const AuthenticationLive = Layer.mergeAll(ApiKeyAuthLive, SessionAuthLive, ScimAuthLive)
