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

/**
 * Why a key does not work for its owner now, said to whoever holds the key
 * (it proved it has the secret), and how it is answered: 401 when the key no
 * longer identifies anyone (its owner was deleted), 403 when it does but the
 * owner may not act — blocked or deactivated (`AccountBlocked`: the spec's
 * "blocked account"), or a role that no longer allows a scope of the key
 * (`ScopeMissing`: "insufficient permission").
 */
export interface KeyRefusal {
  readonly answer: "Unauthenticated" | "AccountBlocked" | "ScopeMissing"
  readonly error: string
}

/** Why a key with `scopes` does not work for its owner now; undefined when it works. */
export const keyRefusal = (owner: KeyOwner | undefined, scopes: ReadonlyArray<string>): KeyRefusal | undefined => {
  if (owner === undefined) {
    return { answer: "Unauthenticated", error: "This key's owner no longer exists: use a key of an active user." }
  }
  if (owner.blocked || !owner.active) {
    return {
      answer: "AccountBlocked",
      error: `This key's owner is ${
        owner.blocked ? "blocked" : "deactivated"
      }: the key works again once an administrator ${owner.blocked ? "unblocks" : "reactivates"} them.`
    }
  }
  if (!mayHoldScopes(owner.role, scopes)) {
    const refused = scopes.filter((scope) => !mayHoldScopes(owner.role, [scope]))
    return {
      answer: "ScopeMissing",
      error: `This key's owner's role (${owner.role}) no longer allows its scope${refused.length === 1 ? "" : "s"} ${
        refused.map((s) => `\`${s}\``).join(", ")
      }: use a key of a user whose role does, or create one without ${refused.length === 1 ? "it" : "them"}.`
    }
  }
  return undefined
}

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
