/**
 * TOTP multi-factor authentication (RFC 6238: SHA-1, 6 digits, 30 s steps,
 * one step of tolerance either way) with otplib. Secrets are stored
 * encrypted; an accepted code's time step is recorded so the same code (or an
 * older one) is never accepted again.
 */
import { Errors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { generateSecret, generateURI, verify } from "otplib"
import * as QRCode from "qrcode"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Encryption } from "../Platform/Encryption.ts"
import { UsersRepo } from "../Users/UsersRepo.ts"

const issuer = "Agent Platform"

export class Mfa extends Context.Service<Mfa, {
  /** Starts (or restarts) setup: a new pending secret, not active until verified. */
  readonly setup: (
    user: UserPrincipal
  ) => Effect.Effect<{ secret: string; otpauth_url: string; qr_code: string }, SqlError>
  /** Confirms setup with a code from the authenticator; enables MFA. */
  readonly confirm: (user: UserPrincipal, code: string) => Effect.Effect<void, Errors.InvalidRequest | SqlError>
  /** Checks a sign-in code against an encrypted secret and claims its time step; false when invalid or replayed. */
  readonly check: (userId: string, encryptedSecret: string, code: string) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/Auth/Mfa") {
  static readonly layer = Layer.effect(
    Mfa,
    Effect.gen(function*() {
      const users = yield* UsersRepo
      const encryption = yield* Encryption
      const audit = yield* AuditLog

      const validStep = (secret: string, code: string) =>
        Effect.promise(() =>
          verify({ secret, token: code, epochTolerance: 30 }).then(
            (result) => (result.valid && "timeStep" in result ? result.timeStep : undefined),
            () => undefined
          )
        )

      const check = (userId: string, encryptedSecret: string, code: string) =>
        Effect.gen(function*() {
          const secret = yield* encryption.decrypt(encryptedSecret).pipe(Effect.orElseSucceed(() => undefined))
          if (secret === undefined) return false
          const step = yield* validStep(secret, code)
          if (step === undefined) return false
          return yield* users.claimTotpStep(userId, step)
        })

      return Mfa.of({
        setup: (user) =>
          Effect.gen(function*() {
            const secret = generateSecret()
            const otpauth_url = generateURI({ issuer, label: user.email, secret })
            const qr_code = yield* Effect.promise(() => QRCode.toDataURL(otpauth_url))
            yield* users.setMfa(user.userId, { mfa_pending_secret: encryption.encrypt(secret) })
            return { secret, otpauth_url, qr_code }
          }),
        confirm: (user, code) =>
          Effect.gen(function*() {
            const row = yield* users.findById(user.tenantId, user.userId)
            const pending = row?.mfa_pending_secret ?? null
            if (row === undefined || pending === null) {
              return yield* new Errors.InvalidRequest({
                error: "No MFA setup in progress: call POST /api/auth/mfa/setup first."
              })
            }
            const accepted = yield* check(user.userId, pending, code)
            if (!accepted) {
              return yield* new Errors.InvalidRequest({
                error: "Invalid or expired code: enter the current 6-digit code from your authenticator app."
              })
            }
            yield* users.setMfa(user.userId, { mfa_secret: pending, mfa_pending_secret: null, mfa_enabled: true })
            yield* audit.append("audit_logs", {
              tenantId: user.tenantId,
              event: "auth.mfa_enabled",
              actor: `user:${user.userId}`,
              target: `user:${user.userId}`
            })
          }),
        check
      })
    })
  )
}
