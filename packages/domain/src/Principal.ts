/**
 * Who is calling: decoded from an API key or a session by the server's
 * authentication middleware, and asked by domain code (never the request).
 */
import { Context } from "effect"

/** Session roles (spec: "Authentication", rule 7). */
export const Roles = ["r_user", "r_admin", "r_superadmin", "r_security_officer", "r_space_admin"] as const
export type Role = typeof Roles[number]

/** A caller authenticated with an API key. */
export interface KeyPrincipal {
  readonly _tag: "Key"
  readonly tenantId: string
  readonly keyId: string
  readonly scopes: ReadonlyArray<string>
  /** The space the key is bound to, if any (spec: "Authentication", rule 4). */
  readonly spaceId: string | null
  readonly rateLimitRpm: number
}

/** A caller signed in with a session. */
export interface UserPrincipal {
  readonly _tag: "User"
  readonly tenantId: string
  readonly userId: string
  readonly sessionId: string
  readonly roleId: Role
  readonly email: string
  readonly nombre: string
}

export type Principal = KeyPrincipal | UserPrincipal

/** The principal of the current request. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()(
  "@agent-platform/domain/Principal/CurrentPrincipal"
) {}

/** Administrators are r_admin and r_superadmin (spec: "Endpoints marked admin"). */
export const isAdmin = (role: Role): boolean => role === "r_admin" || role === "r_superadmin"

/** Security Officer endpoints accept r_security_officer and r_superadmin. */
export const isSecurityOfficer = (role: Role): boolean => role === "r_security_officer" || role === "r_superadmin"
