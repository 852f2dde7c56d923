/** The handlers of `/api/audit`: chain verification (Security Officer) and adoption metrics (admin). */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { Adoption, defaultAdoptionDays } from "./Adoption.ts"
import { AuditLog } from "./AuditLog.ts"

export const AuditHttp = HttpApiBuilder.group(Api, "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    const adoption = yield* Adoption
    return handlers
      .handle("verify", () =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          const security = yield* audit.verify("audit_logs", actor.tenantId)
          const admin = yield* audit.verify("admin_audit_log", actor.tenantId)
          return {
            entries_checked: security.entries_checked + admin.entries_checked,
            entries_invalid: security.entries_invalid + admin.entries_invalid,
            first_invalid_id: security.first_invalid_id ?? admin.first_invalid_id,
            chains: { audit_logs: security, admin_audit_log: admin }
          }
        }).pipe(orDieOnSql))
      .handle("adoption", ({ query }) =>
        Effect.flatMap(currentUser, (actor) =>
          adoption.report(actor.tenantId, query.days ?? defaultAdoptionDays)).pipe(orDieOnSql))
  }))
