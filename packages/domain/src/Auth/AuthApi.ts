import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import {
  AccountBlocked,
  InvalidRequest,
  IpNotAllowed,
  NotImplemented,
  PasswordChangeRequired,
  RateLimited,
  Unauthenticated
} from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import {
  ChangePasswordRequest,
  LoginRequest,
  MfaSetup,
  MfaVerified,
  MfaVerifyRequest,
  Session,
  Success
} from "./Session.ts"

/** Session interface: authentication (`/api/auth`). */
export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("login", "/login", {
      payload: LoginRequest,
      success: Session,
      error: [
        InvalidRequest,
        Unauthenticated,
        IpNotAllowed,
        AccountBlocked,
        PasswordChangeRequired,
        RateLimited,
        NotImplemented
      ]
    }).annotateMerge(doc(
      "Sign in",
      "Sets the session JWT in the HttpOnly cookie `Service-Token` (SameSite=Lax, Secure over https). 401 `Invalid email or password.` for an unknown email, a wrong password and an account locked out after repeated failures alike (same body, similar time: accounts cannot be discovered; the admin surface shows `locked_until`), and for a missing/wrong `totp_code` once MFA is on. Only with the right password: 403 when the IP is outside the allowlist or an administrator blocked the account; 412 when the password expired or must be changed. Lockout: the attempt after `lockout_threshold` consecutive failures locks new sign-ins for `lockout_minutes` (concurrent attempts are counted exactly); it never ends live sessions. An email may exist in several tenants: send `tenant` when the same email and password open more than one."
    )),
    HttpApiEndpoint.post("changePassword", "/change-password", {
      payload: ChangePasswordRequest,
      success: Success,
      error: [InvalidRequest, Unauthenticated, IpNotAllowed, AccountBlocked, NotImplemented]
    }).annotateMerge(doc(
      "Change a password",
      "No session needed: the way out of a 412 at login. An account with TOTP MFA enabled must send `totp_code` too (401 without it or with a wrong one, counted toward the lockout as at login): the password alone cannot replace itself. 400 names the password-policy rules the new password breaks."
    ))
  )
  .add(
    HttpApiEndpoint.post("logout", "/logout", { success: Success, error: [NotImplemented] })
      .middleware(SessionAuth)
      .annotateMerge(doc("Sign out", "Clears the cookie and revokes the session server-side.")),
    HttpApiEndpoint.get("me", "/me", { success: Session, error: [NotImplemented] })
      .middleware(SessionAuth)
      .annotateMerge(
        doc(
          "The signed-in user",
          "The user of the current session: id, name, email, role and tenant. 401 without a valid session."
        )
      ),
    HttpApiEndpoint.post("mfaSetup", "/mfa/setup", { success: MfaSetup, error: [NotImplemented] })
      .middleware(SessionAuth)
      .annotateMerge(doc("Start TOTP setup", "Returns a new secret and its QR code; MFA is enabled once verified.")),
    HttpApiEndpoint.post("mfaVerify", "/mfa/verify", {
      payload: MfaVerifyRequest,
      success: MfaVerified,
      error: [InvalidRequest, NotImplemented]
    })
      .middleware(SessionAuth)
      .annotateMerge(doc("Confirm TOTP setup", "400 for an invalid or expired code."))
  )
  .prefix("/api/auth")
  .annotateMerge(OpenApi.annotations({
    title: "Authentication",
    description:
      "Sign-in to the session interface (`/api`): password, TOTP, password changes, the current user and sign-out."
  }))
{}
