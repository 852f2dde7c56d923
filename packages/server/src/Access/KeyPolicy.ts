/**
 * Who may manage which API keys, and when a key works, decided here and
 * nowhere else (the table is `scopesByRole` in the domain package):
 * - users create keys with the scopes their role allows (`scim` and the
 *   write and analytics scopes need an administrator);
 * - administrators list and revoke every key of the tenant, everyone else
 *   their own;
 * - a key works only while its owner is active, not blocked, and holds a
 *   role allowing every scope of the key (a lockout after failed sign-ins
 *   does not stop it: lockout must not be a weapon against integrations).
 */
import { Errors, isAdmin, mayHoldScopes, type Role, scopesByRole, type UserPrincipal } from "@agent-platform/domain"
import { Effect } from "effect"

/** What a key's validity depends on, besides the key itself. */
export interface KeyOwner {
  readonly role: Role
  readonly active: boolean
  readonly blocked: boolean
}

/** Whether a key with `scopes` works for its owner now; a key without an owner (deleted user) does not. */
export const keyUsable = (owner: KeyOwner | undefined, scopes: ReadonlyArray<string>): boolean =>
  owner !== undefined && owner.active && !owner.blocked && mayHoldScopes(owner.role, scopes)

/** 403 unless the user may create a key with these scopes. */
export const authorizeScopes = (
  user: UserPrincipal,
  scopes: ReadonlyArray<string>
): Effect.Effect<void, Errors.AccessDenied> => {
  const refused = scopes.filter((scope) => !mayHoldScopes(user.roleId, [scope]))
  return refused.length === 0 ? Effect.void : Effect.fail(
    new Errors.AccessDenied({
      error: `Your role ${user.roleId} may not create keys with ${
        refused.map((s) => `\`${s}\``).join(", ")
      }; it allows ${scopesByRole[user.roleId].map((s) => `\`${s}\``).join(", ")}. Ask an administrator for such a key.`
    })
  )
}

/** The keys a user manages: every key of the tenant (undefined) for an administrator, else the user's own. */
export const keyOwnerFilter = (
  user: UserPrincipal
): string | undefined => (isAdmin(user.roleId) ? undefined : user.userId)
