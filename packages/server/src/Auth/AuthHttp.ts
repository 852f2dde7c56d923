import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { AuditLog } from "../Audit/AuditLog.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { UsersRepo } from "../Users/UsersRepo.ts"
import { clientInfo, currentUser } from "./CurrentUser.ts"
import { Mfa } from "./Mfa.ts"
import { clearSessionCookie, setSessionCookie } from "./SessionCookie.ts"
import { Sessions } from "./Sessions.ts"
import { SignIn, toSession } from "./SignIn.ts"

export const AuthHttp = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const signIn = yield* SignIn
    const sessions = yield* Sessions
    const users = yield* UsersRepo
    const mfa = yield* Mfa
    const audit = yield* AuditLog
    return handlers
      .handle("login", ({ payload }) =>
        Effect.gen(function*() {
          const { session, token } = yield* signIn.login(payload, yield* clientInfo)
          yield* setSessionCookie(token.token, token.maxAgeSeconds)
          return session
        }).pipe(orDieOnSql))
      .handle("changePassword", ({ payload }) =>
        Effect.gen(function*() {
          yield* signIn.changePassword(payload, yield* clientInfo)
          return {
            success: true,
            message: "Password changed. Sign in with the new password; other sessions were ended."
          }
        }).pipe(orDieOnSql))
      .handle("logout", () =>
        Effect.gen(function*() {
          const user = yield* currentUser
          yield* sessions.revoke(user.sessionId)
          yield* clearSessionCookie
          yield* audit.append("audit_logs", {
            tenantId: user.tenantId,
            event: "auth.logout",
            actor: `user:${user.userId}`
          })
          return { success: true, message: "Signed out." }
        }).pipe(orDieOnSql))
      .handle("me", () =>
        Effect.gen(function*() {
          const user = yield* currentUser
          const row = yield* users.findById(user.tenantId, user.userId)
          if (row === undefined) return yield* Effect.die(new Error("the session's user vanished"))
          return toSession(row)
        }).pipe(orDieOnSql))
      .handle("mfaSetup", () => Effect.flatMap(currentUser, mfa.setup).pipe(orDieOnSql))
      .handle("mfaVerify", ({ payload }) =>
        Effect.gen(function*() {
          yield* mfa.confirm(yield* currentUser, payload.code)
          return { mfa_enabled: true }
        }).pipe(orDieOnSql))
  }))
