/**
 * Sessions: a row per sign-in (so logout, deactivation and role changes can
 * end it) and a short-lived JWT (jose, HS256 with the session secret) in the
 * `Service-Token` cookie. The JWT lives 30 minutes and is renewed once half
 * of it has passed, up to the session's 12-hour limit.
 */
import type { Role, UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { jwtVerify, SignJWT } from "jose"
import { SessionSecret } from "../Identity/SessionSecret.ts"
import { isUuid } from "../Platform/Ids.ts"

export const tokenLifetimeSeconds = 30 * 60
export const sessionLifetimeHours = 12

export interface IssuedToken {
  readonly token: string
  readonly maxAgeSeconds: number
}

export interface VerifiedSession {
  readonly principal: UserPrincipal
  /** A renewed token to set, when the current one is past half its life. */
  readonly renewed: IssuedToken | undefined
}

interface SessionUserRow {
  readonly session_id: string
  readonly tenant_id: string
  readonly user_id: string
  readonly role_id: Role
  readonly platform_tenant: boolean
  readonly email: string
  readonly nombre: string
  readonly expires_at: Date
}

export class Sessions extends Context.Service<Sessions, {
  readonly issue: (
    user: { readonly id: string; readonly tenant_id: string },
    client: { readonly ip: string | null; readonly userAgent: string | null }
  ) => Effect.Effect<IssuedToken, SqlError>
  /** The session of a token: undefined when the token is invalid, expired, or the session ended. */
  readonly verify: (token: string) => Effect.Effect<VerifiedSession | undefined, SqlError>
  readonly revoke: (sessionId: string) => Effect.Effect<void, SqlError>
  readonly revokeAllOfUser: (userId: string) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Auth/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const secret = Redacted.value(yield* SessionSecret)

      const sign = (
        claims: { readonly sid: string; readonly sub: string; readonly tid: string },
        sessionExpiresAt: Date
      ) =>
        Effect.promise(async (): Promise<IssuedToken> => {
          const now = Math.floor(Date.now() / 1000)
          const exp = Math.min(now + tokenLifetimeSeconds, Math.floor(sessionExpiresAt.getTime() / 1000))
          const token = await new SignJWT({ sid: claims.sid, tid: claims.tid })
            .setProtectedHeader({ alg: "HS256", typ: "JWT" })
            .setSubject(claims.sub)
            .setIssuedAt(now)
            .setExpirationTime(exp)
            .setIssuer("agent-platform")
            .sign(secret)
          return { token, maxAgeSeconds: Math.max(0, exp - now) }
        })

      const issue = (
        user: { readonly id: string; readonly tenant_id: string },
        client: { readonly ip: string | null; readonly userAgent: string | null }
      ) =>
        Effect.gen(function*() {
          const [row] = yield* sql<{ id: string; expires_at: Date }>`
            INSERT INTO sessions (tenant_id, user_id, expires_at, ip, user_agent)
            VALUES (${user.tenant_id}, ${user.id}, now() + make_interval(hours => ${sessionLifetimeHours}),
                    ${client.ip}, ${client.userAgent?.slice(0, 500) ?? null})
            RETURNING id, expires_at`
          return yield* sign({ sid: row.id, sub: user.id, tid: user.tenant_id }, row.expires_at)
        })

      const verify = (token: string) =>
        Effect.gen(function*() {
          const claims = yield* Effect.promise(() =>
            // A token without an expiry would be valid forever: `exp` (and `iat`, `sub`) must be there.
            jwtVerify(token, secret, {
              algorithms: ["HS256"],
              issuer: "agent-platform",
              requiredClaims: ["exp", "iat", "sub"]
            }).then(
              (result) => result.payload,
              () => undefined
            )
          )
          const sid = claims?.sid
          if (claims === undefined || typeof sid !== "string" || !isUuid(sid)) return undefined
          // One indexed read per request: a revoked session, a deactivated or blocked user or a changed role ends
          // here at once. A lockout does not: it stops new sign-ins, never live sessions.
          const rows = yield* sql<SessionUserRow>`
            SELECT s.id AS session_id, s.tenant_id, s.user_id, u.role_id, t.is_platform AS platform_tenant,
                   u.email, u.nombre, s.expires_at
            FROM sessions s JOIN users u ON u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id
            WHERE s.id = ${sid} AND s.revoked_at IS NULL AND s.expires_at > now()
              AND u.active AND NOT u.blocked`
          const row = rows[0]
          if (row === undefined || row.user_id !== claims.sub) return undefined
          const remaining = (claims.exp ?? 0) - Date.now() / 1000
          const renewed = remaining < tokenLifetimeSeconds / 2
            ? yield* sign({ sid: row.session_id, sub: row.user_id, tid: row.tenant_id }, row.expires_at)
            : undefined
          const principal: UserPrincipal = {
            _tag: "User",
            tenantId: row.tenant_id,
            userId: row.user_id,
            sessionId: row.session_id,
            roleId: row.role_id,
            platformTenant: row.platform_tenant,
            email: row.email,
            nombre: row.nombre
          }
          return { principal, renewed }
        })

      return Sessions.of({
        issue,
        verify,
        revoke: (sessionId) =>
          Effect.asVoid(sql`UPDATE sessions SET revoked_at = now() WHERE id = ${sessionId} AND revoked_at IS NULL`),
        revokeAllOfUser: (userId) =>
          Effect.asVoid(sql`UPDATE sessions SET revoked_at = now() WHERE user_id = ${userId} AND revoked_at IS NULL`)
      })
    })
  )
}
