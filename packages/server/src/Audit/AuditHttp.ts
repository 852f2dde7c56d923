import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Api, Errors } from "@agent-platform/domain"
import { currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { AuditLog } from "./AuditLog.ts"

export const AuditHttp = HttpApiBuilder.group(Api, "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    return handlers
      .handle("verify", () =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          const [security, admin] = yield* Effect.all([
            audit.verify("audit_logs", actor.tenantId),
            audit.verify("admin_audit_log", actor.tenantId)
          ])
          return {
            entries_checked: security.entries_checked + admin.entries_checked,
            entries_invalid: security.entries_invalid + admin.entries_invalid,
            first_invalid_id: security.first_invalid_id ?? admin.first_invalid_id,
            chains: { audit_logs: security, admin_audit_log: admin }
          }
        }).pipe(orDieOnSql))
      .handle("adoption", () => Effect.fail(Errors.notImplemented()))
  }))
