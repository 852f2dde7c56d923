/**
 * Signing in and changing a password: the credential checks of the session
 * interface, with the tenant's policies (IP allowlist, lockout, password
 * expiry, TOTP) applied in an order that leaks as little as possible: an
 * unknown email and a wrong password get the same answer, in similar time.
 */
import { Context, Effect, Layer } from "effect"
import type * as NetAddress from "effect/net/NetAddress"
import type { SqlError } from "effect/sql/SqlError"
import { Errors, type Session } from "@agent-platform/domain"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Passwords } from "../Identity/Passwords.ts"
import { IpAllowlist } from "../SecurityPolicies/IpAllowlist.ts"
import { brokenRules, describeBroken, PasswordPolicies, type PasswordPolicy } from "../SecurityPolicies/PasswordPolicies.ts"
import { type UserRow, UsersRepo } from "../Users/UsersRepo.ts"
import { Mfa } from "./Mfa.ts"
import { type IssuedToken, Sessions } from "./Sessions.ts"

export interface ClientInfo {
  readonly ip: NetAddress.IpAddress | undefined
  readonly ipText: string | null
  readonly userAgent: string | null
}

const invalidCredentials = () => new Errors.Unauthenticated({ error: "Invalid email or password." })

export const toSession = (user: Pick<UserRow, "id" | "tenant_id" | "role_id" | "nombre" | "email">): Session.Session => ({
  user_id: user.id,
  tenant_id: user.tenant_id,
  role_id: user.role_id,
  nombre: user.nombre,
  email: user.email
})

const passwordExpired = (user: UserRow, policy: PasswordPolicy) =>
  policy.max_age_days !== null &&
  user.password_changed_at.getTime() + policy.max_age_days * 86_400_000 < Date.now()

type CredentialError = Errors.Unauthenticated | Errors.IpNotAllowed | Errors.AccountBlocked

export class SignIn extends Context.Service<SignIn, {
  readonly login: (
    input: { readonly email: string; readonly password: string; readonly totp_code?: string | undefined },
    client: ClientInfo
  ) => Effect.Effect<{ session: Session.Session; token: IssuedToken }, CredentialError | Errors.PasswordChangeRequired | SqlError>
  readonly changePassword: (
    input: { readonly email: string; readonly current_password: string; readonly new_password: string },
    client: ClientInfo
  ) => Effect.Effect<void, CredentialError | Errors.InvalidRequest | SqlError>
}>()("@agent-platform/server/Auth/SignIn") {
  static readonly layer = Layer.effect(
    SignIn,
    Effect.gen(function*() {
      const users = yield* UsersRepo
      const passwords = yield* Passwords
      const policies = yield* PasswordPolicies
      const allowlist = yield* IpAllowlist
      const sessions = yield* Sessions
      const mfa = yield* Mfa
      const audit = yield* AuditLog

      const recordFailure = (user: UserRow, policy: PasswordPolicy, client: ClientInfo, reason: string) =>
        Effect.gen(function*() {
          const after = yield* users.recordFailedLogin(user.id, policy.lockout_threshold, policy.lockout_minutes)
          yield* audit.append("audit_logs", {
            tenantId: user.tenant_id,
            event: "auth.login_failed",
            actor: `user:${user.id}`,
            data: { reason, consecutive_failures: after.failed_logins, locked: after.locked_until !== null },
            ip: client.ipText
          })
        })

      /**
       * The checks shared by login and password change, up to a verified
       * password: unknown user, IP allowlist, block and lockout, password.
       */
      const checkCredentials = (email: string, password: string, client: ClientInfo) =>
        Effect.gen(function*() {
          const user = yield* users.findByEmail(email)
          if (user === undefined || user.password_hash === null || !user.active) {
            yield* passwords.verifyDummy(password)
            return yield* invalidCredentials()
          }
          const policy = yield* policies.get(user.tenant_id)
          if (!(yield* allowlist.isAllowed(user.tenant_id, client.ip))) {
            yield* audit.append("audit_logs", {
              tenantId: user.tenant_id,
              event: "auth.ip_refused",
              actor: `user:${user.id}`,
              ip: client.ipText
            })
            return yield* new Errors.IpNotAllowed({
              error: `Sign-in from ${client.ipText ?? "an unknown address"} is not allowed by your organization's IP allowlist.`
            })
          }
          if (user.blocked) {
            return yield* new Errors.AccountBlocked({ error: "This account is blocked: ask an administrator to unblock it." })
          }
          if (user.locked_until !== null && user.locked_until.getTime() > Date.now()) {
            return yield* new Errors.AccountBlocked({
              error: `Too many failed sign-ins: the account is locked until ${user.locked_until.toISOString()}. Try again later or ask an administrator to unblock it.`
            })
          }
          if (!(yield* passwords.verify(user.password_hash, password))) {
            yield* recordFailure(user, policy, client, "password")
            return yield* invalidCredentials()
          }
          return { user, policy }
        })

      const login = Effect.fn("SignIn.login")(function*(
        input: { readonly email: string; readonly password: string; readonly totp_code?: string | undefined },
        client: ClientInfo
      ) {
        const { user, policy } = yield* checkCredentials(input.email, input.password, client)
        if (user.mfa_enabled && user.mfa_secret !== null) {
          if (input.totp_code === undefined) {
            return yield* new Errors.Unauthenticated({ error: "This account uses two-factor authentication: send totp_code too." })
          }
          if (!(yield* mfa.check(user.id, user.mfa_secret, input.totp_code))) {
            yield* recordFailure(user, policy, client, "totp")
            return yield* new Errors.Unauthenticated({ error: "Invalid or already used TOTP code." })
          }
        }
        if (user.must_change_password || passwordExpired(user, policy)) {
          return yield* new Errors.PasswordChangeRequired({
            error: user.must_change_password
              ? "You must change your password before signing in: POST /api/auth/change-password."
              : "Your password has expired: change it with POST /api/auth/change-password."
          })
        }
        yield* users.recordLogin(user.id)
        const token = yield* sessions.issue(user, { ip: client.ipText, userAgent: client.userAgent })
        yield* audit.append("audit_logs", {
          tenantId: user.tenant_id,
          event: "auth.login",
          actor: `user:${user.id}`,
          ip: client.ipText
        })
        return { session: toSession(user), token }
      })

      const changePassword = Effect.fn("SignIn.changePassword")(function*(
        input: { readonly email: string; readonly current_password: string; readonly new_password: string },
        client: ClientInfo
      ) {
        const { user, policy } = yield* checkCredentials(input.email, input.current_password, client)
        const broken = brokenRules(policy, input.new_password)
        if (broken.length > 0) return yield* new Errors.InvalidRequest({ error: describeBroken(broken) })
        if (input.new_password === input.current_password) {
          return yield* new Errors.InvalidRequest({ error: "The new password must differ from the current one." })
        }
        yield* users.setPassword(user.id, yield* passwords.hash(input.new_password))
        yield* sessions.revokeAllOfUser(user.id)
        yield* audit.append("audit_logs", {
          tenantId: user.tenant_id,
          event: "auth.password_changed",
          actor: `user:${user.id}`,
          ip: client.ipText
        })
      })

      return SignIn.of({ login, changePassword })
    })
  )
}
