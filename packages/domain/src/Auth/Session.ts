/** Session interface schemas (spec: "Session", "Session interface: authentication"). */
import { Schema } from "effect"
import { Roles } from "../Principal.ts"

export const RoleId = Schema.Literals(Roles)

export const Email = Schema.String.check(
  Schema.isMaxLength(254),
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "must be an email address" })
).annotate({ format: "email" })

export const Password = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)).annotate({
  format: "password"
})

/** The signed-in user (spec: "Session"). */
export const Session = Schema.Struct({
  user_id: Schema.String,
  tenant_id: Schema.String,
  role_id: RoleId,
  nombre: Schema.String.annotate({ description: "The user's display name" }),
  email: Schema.String.annotate({ format: "email" })
}).annotate({ identifier: "Session" })
export type Session = typeof Session.Type

/** The organization to sign in to, when one email has accounts in several (its name or id). */
const TenantChoice = Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))).annotate({
  description:
    "The organization (tenant name or id), needed only when the same email and password open accounts in several"
})

/** The current TOTP code: required, next to the password, once the account has TOTP MFA enabled. */
const TotpCode = Schema.optionalKey(Schema.String.check(Schema.isPattern(/^\d{6}$/, { message: "must be 6 digits" })))
  .annotate({ description: "Required once TOTP MFA is enabled: the authenticator's current 6-digit code" })

export const LoginRequest = Schema.Struct({
  email: Email,
  password: Password,
  tenant: TenantChoice,
  totp_code: TotpCode
})

export const ChangePasswordRequest = Schema.Struct({
  email: Email,
  tenant: TenantChoice,
  current_password: Password,
  new_password: Password,
  totp_code: TotpCode
})

export const Success = Schema.Struct({ success: Schema.Boolean, message: Schema.String })

export const MfaSetup = Schema.Struct({
  secret: Schema.String.annotate({ description: "Base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s)" }),
  otpauth_url: Schema.String,
  qr_code: Schema.String.annotate({ description: "PNG QR code of otpauth_url as a data: URL" })
})

export const MfaVerifyRequest = Schema.Struct({
  code: Schema.String.check(Schema.isPattern(/^\d{6}$/, { message: "must be 6 digits" }))
})

export const MfaVerified = Schema.Struct({ mfa_enabled: Schema.Boolean })
