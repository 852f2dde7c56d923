/**
 * Who may do what on the session interface, decided here and nowhere else:
 * whether a role meets an endpoint's `RequiredRole`, and whether a signed-in
 * user may grant a role or change a user holding one (the role model of
 * `grantableRoles` in the domain package, documented in the README).
 */
import {
  Errors,
  grantableRoles,
  isAdmin,
  isSecurityOfficer,
  mayCreateTenants,
  mayGrant,
  type Role,
  type RoleRequirement,
  type UserPrincipal
} from "@agent-platform/domain"
import { Effect } from "effect"

/** Whether the signed-in user meets an endpoint's role requirement. */
export const roleSatisfies = (
  requirement: RoleRequirement,
  user: Pick<UserPrincipal, "roleId" | "platformTenant">
): boolean => {
  const role = user.roleId
  switch (requirement) {
    case "user":
      return true
    case "admin":
      return isAdmin(role)
    case "space_admin":
      return isAdmin(role) || role === "r_space_admin"
    case "security_officer":
      return isSecurityOfficer(role)
    case "superadmin":
      return role === "r_superadmin"
    case "platform_superadmin":
      return mayCreateTenants(user)
  }
}

/** The refusal's words for each requirement. */
export const roleDescription: Record<RoleRequirement, string> = {
  user: "a signed-in user",
  admin: "an administrator (r_admin or r_superadmin)",
  space_admin: "an administrator or a Space Admin",
  security_officer: "the Security Officer role (r_security_officer or r_superadmin)",
  superadmin: "r_superadmin",
  platform_superadmin: "the r_superadmin of the platform (bootstrap) tenant"
}

const grantable = (actor: Role) => grantableRoles[actor].length === 0 ? "no role" : grantableRoles[actor].join(", ")

/**
 * Fails with 403 unless `actor` may give `role` to a user (a creation, or a
 * change of role), and — for an existing user — may change a user holding
 * `current` at all (its role, `active`, `blocked`).
 */
export const authorizeGrant = (
  actor: UserPrincipal,
  change: { readonly role?: Role | undefined; readonly current?: Role | undefined }
): Effect.Effect<void, Errors.AccessDenied> => {
  if (change.current !== undefined && !mayGrant(actor.roleId, change.current)) {
    return Effect.fail(
      new Errors.AccessDenied({
        error:
          `An ${actor.roleId} cannot change a user who holds ${change.current}: ask a user who can grant that role.`
      })
    )
  }
  if (change.role !== undefined && !mayGrant(actor.roleId, change.role)) {
    return Effect.fail(
      new Errors.AccessDenied({
        error: `An ${actor.roleId} cannot grant ${change.role}; it may grant ${grantable(actor.roleId)}.`
      })
    )
  }
  return Effect.void
}
