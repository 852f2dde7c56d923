/**
 * How endpoints are authenticated and authorized, declared once.
 *
 * Two middlewares exist, one per interface of the spec: `ApiKeyAuth` for the
 * `/v1` API-key interface and `SessionAuth` for the `/api` session interface.
 * Endpoint annotations say what each endpoint needs (scopes, rate-limit class,
 * role); the server's middleware reads them, so a requirement is written once,
 * next to the endpoint it guards.
 */
import { Context } from "effect"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  AccountBlocked,
  IpNotAllowed,
  RateLimited,
  RoleMissing,
  ScopeMissing,
  SessionRequired,
  Unauthenticated
} from "./Errors.ts"
import { type CurrentPrincipal, type Role, Roles } from "./Principal.ts"

/** Scope names an API key may carry (spec table plus `scim`). */
export const Scopes = [
  "chat",
  "agents",
  "agents:read",
  "files",
  "knowledge:read",
  "knowledge:write",
  "actions",
  "actions:read",
  "actions:execute",
  "analytics",
  "usage:read",
  "scim"
] as const
export type Scope = typeof Scopes[number]

/** The scopes every signed-in user's keys may carry: chatting and reading. */
export const userScopes: ReadonlyArray<Scope> = ["chat", "agents", "agents:read", "knowledge:read", "actions:read"]

/**
 * The scopes a user's keys may carry, by the user's role: administrators
 * (r_admin, r_superadmin) every scope, `scim` included; everyone else
 * {@link userScopes}. A key works only while its owner is active, not
 * blocked, and holds a role that allows every scope of the key.
 */
export const scopesByRole: Readonly<Record<Role, ReadonlyArray<Scope>>> = {
  r_superadmin: Scopes,
  r_admin: Scopes,
  r_security_officer: userScopes,
  r_space_admin: userScopes,
  r_user: userScopes
}

/** Whether a user of `role` may hold a key with `scopes`. */
export const mayHoldScopes = (role: Role, scopes: ReadonlyArray<string>): boolean =>
  scopes.every((scope) => (scopesByRole[role] as ReadonlyArray<string>).includes(scope))

/** Key management as a Markdown table, for the API description and the README. */
export const keyModelTable = [
  "| Signed-in user | Creates keys with the scopes | Lists and revokes |",
  "|---|---|---|",
  ...Roles.map((role) =>
    `| ${role} | ${scopesByRole[role] === Scopes ? "every scope (scim included)" : scopesByRole[role].join(", ")} | ${
      role === "r_admin" || role === "r_superadmin" ? "every key of the tenant" : "their own keys"
    } |`
  )
].join("\n")

/**
 * The scopes that grant an endpoint, any one of them being enough (a broad
 * scope and its narrow one are alternatives: spec "Authentication", rule 6).
 */
export const RequiredScopes = Context.Reference<ReadonlyArray<Scope>>(
  "@agent-platform/domain/Security/RequiredScopes",
  { defaultValue: () => [] }
)

/**
 * The per-minute limit class of an endpoint (spec "Limits"): `chat`, `ingest`
 * and `execute` (each its own bucket, 60/min; execute's is shared by chat tool
 * calls and the MCP tool, since "the limit follows the whole chain"), and
 * `data`, every other key-authenticated endpoint (300/min, one bucket). The key's own `rate_limit_rpm` applies too; the stricter wins.
 */
export type RateLimitClass = "chat" | "ingest" | "execute" | "data"
export const RateLimitClass = Context.Reference<RateLimitClass>(
  "@agent-platform/domain/Security/RateLimitClass",
  { defaultValue: () => "data" }
)

/** The limits per class, per key and minute. */
export const rateLimitPerMinute: Record<RateLimitClass, number> = { chat: 60, ingest: 60, execute: 60, data: 300 }

/**
 * The role a session endpoint needs: `user` any signed-in user, `admin`
 * r_admin or r_superadmin, `space_admin` an admin or an r_space_admin (whose
 * reach the service limits to their assigned spaces), `security_officer`
 * r_security_officer or r_superadmin, `superadmin` r_superadmin only,
 * `platform_superadmin` the r_superadmin of the platform (bootstrap) tenant
 * only (see `mayCreateTenants`).
 */
export type RoleRequirement =
  | "user"
  | "admin"
  | "space_admin"
  | "security_officer"
  | "superadmin"
  | "platform_superadmin"
export const RequiredRole = Context.Reference<RoleRequirement>(
  "@agent-platform/domain/Security/RequiredRole",
  { defaultValue: () => "user" }
)

/** The API key carrier: `Authorization: Bearer sk_live_...`. */
export const apiKeySecurity = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "API key `sk_live_` + 64 hex characters, created with POST /v1/keys. If a cookie is also sent, the key alone decides."
  )
)

/** The session carrier: the `Service-Token` cookie set by POST /api/auth/login (`service_session` is accepted too). */
export const sessionSecurity = HttpApiSecurity.apiKey({ key: "Service-Token", in: "cookie" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "Session JWT set by POST /api/auth/login in the HttpOnly cookie `Service-Token` (the name `service_session` is accepted too). Lifetime 30 minutes, renewed on use."
  )
)

/** Authenticates the `/v1` interface with an API key, checks scopes and applies rate limits. */
export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentPrincipal }>()(
  "@agent-platform/domain/Security/ApiKeyAuth",
  {
    security: { apiKey: apiKeySecurity },
    error: [Unauthenticated, AccountBlocked, ScopeMissing, RateLimited]
  }
) {}

/** Authenticates the `/api` interface with a session and checks the endpoint's role. */
export class SessionAuth extends HttpApiMiddleware.Service<SessionAuth, { provides: CurrentPrincipal }>()(
  "@agent-platform/domain/Security/SessionAuth",
  {
    security: { session: sessionSecurity },
    error: [Unauthenticated, SessionRequired, RoleMissing, IpNotAllowed, AccountBlocked]
  }
) {}
