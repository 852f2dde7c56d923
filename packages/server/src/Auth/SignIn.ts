/**
 * Signing in and changing a password: the credential checks of the session
 * interface, with the tenant's policies (IP allowlist, lockout, password
 * expiry, TOTP) applied in an order that leaks as little as possible.
 *
 * - Whoever does not know the password learns nothing: an unknown email, a
 *   wrong password and a locked-out account all answer 401 "Invalid email or
 *   password." after one password hash's worth of work. Only a caller with
 *   the right password hears that the IP is outside the allowlist or the
 *   account is blocked (403), or that the password expired (412); only the
 *   admin surface says "locked" (`locked_until`).
 * - Lockout stops new sign-ins; it never ends live sessions or stops keys.
 * - Attempts are claimed atomically before the password is checked, so
 *   however many run at once, at most `lockout_threshold + 1` passwords are
 *   checked before the account locks.
 * - An email is unique within a tenant, not across tenants: sign-in checks
 *   the password against each active account with that email (or only the
 *   one of `tenant` when given), so that another tenant's user with the same
 *   address is never revealed.
 */
import { Errors, type Session } from "@agent-platform/domain"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import type * as NetAddress from "effect/net/NetAddress"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Passwords } from "../Identity/Passwords.ts"
import { IpAllowlist } from "../SecurityPolicies/IpAllowlist.ts"
import {
  brokenRules,
  describeBroken,
  PasswordPolicies,
  type PasswordPolicy
} from "../SecurityPolicies/PasswordPolicies.ts"
import { type UserRow, UsersRepo } from "../Users/UsersRepo.ts"
import { Mfa } from "./Mfa.ts"
import { type IssuedToken, Sessions } from "./Sessions.ts"

export interface ClientInfo {
  readonly ip: NetAddress.IpAddress | undefined
  readonly ipText: string | null
  readonly userAgent: string | null
}

/** The least time a refused sign-in takes, whatever the reason (see `withRefusalFloor`). */
const refusalFloor = Duration.millis(250)

/** How long a sign-in waits for a pending attempt of the same account to settle. */
const claimWait = Duration.seconds(10)

const invalidCredentials = () => new Errors.Unauthenticated({ error: "Invalid email or password." })

export const toSession = (
  user: Pick<UserRow, "id" | "tenant_id" | "role_id" | "nombre" | "email">
): Session.Session => ({
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

/** What a sign-in names: an email, a password, and optionally the organization (name or id). */
interface Credentials {
  readonly email: string
  readonly password: string
  readonly tenant?: string | undefined
}

/** One account whose password matched, with its policy and the attempt it claimed. */
interface Verified {
  readonly user: UserRow
  readonly policy: PasswordPolicy
  readonly attempt: number
}

export class SignIn extends Context.Service<SignIn, {
  readonly login: (
    input: Credentials & { readonly totp_code?: string | undefined },
    client: ClientInfo
  ) => Effect.Effect<
    { session: Session.Session; token: IssuedToken },
    CredentialError | Errors.PasswordChangeRequired | SqlError
  >
  readonly changePassword: (
    input: {
      readonly email: string
      readonly current_password: string
      readonly new_password: string
      readonly tenant?: string | undefined
    },
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

      const recordFailure = (verified: Verified, client: ClientInfo, reason: "password" | "totp") =>
        Effect.gen(function*() {
          const { policy, user } = verified
          const after = yield* users.recordFailedLogin(user.id, {
            claimed: reason === "password",
            threshold: policy.lockout_threshold,
            lockoutMinutes: policy.lockout_minutes
          })
          yield* audit.append("audit_logs", {
            tenantId: user.tenant_id,
            event: "auth.login_failed",
            actor: `user:${user.id}`,
            data: { reason, consecutive_failures: after.failures, locked: after.locked },
            ip: client.ipText
          })
        })

      /**
       * Claims an attempt, waiting (at most `claimWait`) while every attempt
       * is pending: concurrent sign-ins of one account queue rather than fail.
       */
      const claim = (user: UserRow, policy: PasswordPolicy) =>
        users.claimAttempt(user.id, policy.lockout_threshold).pipe(
          Effect.repeat({
            until: (outcome) => outcome._tag !== "Busy",
            schedule: Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: claimWait }))
          })
        )

      /**
       * One account's password check after claiming an attempt: the account
       * when it matches, undefined otherwise (a wrong password is counted; a
       * locked account spends the same time without a check).
       */
      const tryAccount = (user: UserRow & { readonly password_hash: string }, password: string, client: ClientInfo) =>
        Effect.gen(function*() {
          const policy = yield* policies.get(user.tenant_id)
          const claimed = yield* claim(user, policy)
          if (claimed._tag !== "Claimed") {
            yield* passwords.verifyDummy(password)
            yield* audit.append("audit_logs", {
              tenantId: user.tenant_id,
              event: "auth.login_locked",
              actor: `user:${user.id}`,
              data: { reason: claimed._tag === "Locked" ? "locked" : "busy" },
              ip: client.ipText
            })
            return undefined
          }
          const verified: Verified = { user, policy, attempt: claimed.attempt }
          // The claim is settled exactly once, whatever happens to this request.
          const matched = yield* passwords.verify(user.password_hash, password).pipe(
            Effect.onExit((exit) =>
              exit._tag === "Success" && !exit.value
                ? recordFailure(verified, client, "password")
                : users.releaseAttempt(user.id)
            ),
            Effect.uninterruptible
          )
          return matched ? verified : undefined
        })

      /**
       * The checks shared by login and password change, up to a verified
       * password, then what only the account's owner may hear: IP allowlist
       * and block.
       */
      const checkCredentials = (credentials: Credentials, client: ClientInfo) =>
        Effect.gen(function*() {
          const candidates = (yield* users.findByEmail(credentials.email, credentials.tenant)).filter(
            (user): user is UserRow & { readonly password_hash: string } => user.password_hash !== null
          )
          if (candidates.length === 0) {
            yield* passwords.verifyDummy(credentials.password)
            return yield* invalidCredentials()
          }
          const opened = (yield* Effect.forEach(candidates, (user) => tryAccount(user, credentials.password, client), {
            concurrency: "unbounded"
          })).filter((verified) => verified !== undefined)
          if (opened.length === 0) return yield* invalidCredentials()
          // A deactivated account that shares the address and password never stands in the way of an active one.
          const active = opened.filter((verified) => verified.user.active)
          const matches = active.length === 1 ? active : opened
          if (matches.length > 1) {
            return yield* new Errors.Unauthenticated({
              error:
                "This email and password open accounts in several organizations: send `tenant` (the organization's name) too."
            })
          }
          const verified = matches[0]
          const { user } = verified
          if (!(yield* allowlist.isAllowed(user.tenant_id, client.ip))) {
            yield* audit.append("audit_logs", {
              tenantId: user.tenant_id,
              event: "auth.ip_refused",
              actor: `user:${user.id}`,
              ip: client.ipText
            })
            return yield* new Errors.IpNotAllowed({
              error: `Sign-in from ${
                client.ipText ?? "an unknown address"
              } is not allowed by your organization's IP allowlist.`
            })
          }
          if (user.blocked) {
            return yield* new Errors.AccountBlocked({
              error: "This account is blocked: ask an administrator to unblock it."
            })
          }
          // Told only to who knows the password: a deactivated account (admin surface or SCIM) is refused with 403.
          if (!user.active) {
            return yield* new Errors.AccountBlocked({
              error: "This account is deactivated: ask your administrator (or your identity provider) to reactivate it."
            })
          }
          return verified
        })

      /**
       * The second factor, after a verified password, for every way in that a
       * password opens (login and password change): an account with TOTP MFA
       * enabled needs its current code too; a wrong one counts toward the
       * lockout like a wrong password.
       */
      const checkSecondFactor = (verified: Verified, client: ClientInfo, totpCode: string | undefined) =>
        Effect.gen(function*() {
          const { user } = verified
          if (!user.mfa_enabled || user.mfa_secret === null) return
          if (totpCode === undefined) {
            return yield* new Errors.Unauthenticated({
              error: "This account uses two-factor authentication: send totp_code too."
            })
          }
          if (!(yield* mfa.check(user.id, user.mfa_secret, totpCode))) {
            yield* recordFailure(verified, client, "totp")
            return yield* new Errors.Unauthenticated({ error: "Invalid or already used TOTP code." })
          }
        })

      const login = Effect.fn("SignIn.login")(function*(
        input: Credentials & { readonly totp_code?: string | undefined },
        client: ClientInfo
      ) {
        const verified = yield* checkCredentials(input, client)
        const { policy, user } = verified
        yield* checkSecondFactor(verified, client, input.totp_code)
        yield* users.clearFailedLogins(user.id)
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
        input: {
          readonly email: string
          readonly current_password: string
          readonly new_password: string
          readonly tenant?: string | undefined
          readonly totp_code?: string | undefined
        },
        client: ClientInfo
      ) {
        const verified = yield* checkCredentials(
          { email: input.email, password: input.current_password, tenant: input.tenant },
          client
        )
        const { policy, user } = verified
        yield* checkSecondFactor(verified, client, input.totp_code)
        yield* users.clearFailedLogins(user.id)
        const broken = brokenRules(policy, input.new_password)
        if (broken.length > 0) return yield* new Errors.InvalidRequest({ error: describeBroken(broken) })
        if (input.new_password === input.current_password) {
          return yield* new Errors.InvalidRequest({ error: "The new password must differ from the current one." })
        }
        // Against the hash just verified: of two changes at once, the second finds it gone and is refused
        // like a wrong current password, instead of answering 200 for a password that does not work.
        const replaced = user.password_hash !== null &&
          (yield* users.replacePassword(user.id, user.password_hash, yield* passwords.hash(input.new_password)))
        if (!replaced) return yield* invalidCredentials()
        yield* sessions.revokeAllOfUser(user.id)
        yield* audit.append("audit_logs", {
          tenantId: user.tenant_id,
          event: "auth.password_changed",
          actor: `user:${user.id}`,
          ip: client.ipText
        })
      })

      /**
       * A refused credential answers no sooner than {@link refusalFloor} after
       * the request began: an unknown email does less work than a known one
       * (no attempt to claim, no audit entry), and the difference must not
       * tell which addresses have accounts.
       */
      const withRefusalFloor = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function*() {
          const started = Date.now()
          return yield* effect.pipe(
            Effect.tapError((error) =>
              (error as { readonly _tag?: string })._tag === "Unauthenticated"
                ? Effect.sleep(Duration.millis(Math.max(0, Duration.toMillis(refusalFloor) - (Date.now() - started))))
                : Effect.void
            )
          )
        })

      return SignIn.of({
        login: (input, client) => withRefusalFloor(login(input, client)),
        changePassword: (input, client) => withRefusalFloor(changePassword(input, client))
      })
    })
  )
}
