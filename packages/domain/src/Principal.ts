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
  /**
   * The role of the user who created the key: a key acts with no more
   * authority than its owner (SCIM changes only the users the owner could
   * change on the admin surface).
   */
  readonly ownerRole: Role
  /** The user who created the key. */
  readonly ownerId: string
}

/** A caller signed in with a session. */
export interface UserPrincipal {
  readonly _tag: "User"
  readonly tenantId: string
  readonly userId: string
  readonly sessionId: string
  readonly roleId: Role
  /** Whether the user's tenant is the platform's own (the bootstrap tenant): its r_superadmin runs the platform. */
  readonly platformTenant: boolean
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

/**
 * The role model, declared once (README "Roles", and the descriptions of the
 * admin endpoints, are written from it): the roles a signed-in user may grant,
 * by the user's own role. Granting means creating a user with the role, or
 * changing a user's role to it; changing a user who holds a role (its role,
 * `active` or `blocked`) needs that role to be grantable too, so an r_admin
 * can neither create nor demote, block or deactivate an r_superadmin.
 * Roles absent from an entry grant nothing (their holders cannot reach the
 * admin surface at all: 403).
 */
export const grantableRoles: Readonly<Record<Role, ReadonlyArray<Role>>> = {
  r_superadmin: Roles,
  r_admin: ["r_user", "r_space_admin", "r_security_officer", "r_admin"],
  r_security_officer: [],
  r_space_admin: [],
  r_user: []
}

/** Whether `actor` may give `role` to a user of its tenant (see {@link grantableRoles}). */
export const mayGrant = (actor: Role, role: Role): boolean => grantableRoles[actor].includes(role)

/**
 * Only the r_superadmin of the platform tenant (the one created at bootstrap)
 * creates tenants: a tenant's own r_superadmin administers that tenant only.
 */
export const mayCreateTenants = (actor: Pick<UserPrincipal, "roleId" | "platformTenant">): boolean =>
  actor.roleId === "r_superadmin" && actor.platformTenant

/** The role model as a Markdown table, for the API description and the README. */
export const roleModelTable = [
  "| Signed-in user | May create users with, and change users holding | Creates tenants |",
  "|---|---|---|",
  `| r_superadmin of the platform tenant (the bootstrap tenant) | ${grantableRoles.r_superadmin.join(", ")} | yes |`,
  `| r_superadmin of any other tenant | ${grantableRoles.r_superadmin.join(", ")} | no |`,
  ...(["r_admin", "r_security_officer", "r_space_admin", "r_user"] as const).map((role) =>
    `| ${role} | ${
      grantableRoles[role].length === 0 ? "none (403 on the admin surface)" : grantableRoles[role].join(", ")
    } | no |`
  )
].join("\n")
