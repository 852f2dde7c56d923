import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { Adoption, AuditVerification } from "./Audit.ts"

/** Audit (`/api/audit`). */
export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("verify", "/verify", { success: AuditVerification })
      .annotate(RequiredRole, "security_officer")
      .annotateMerge(doc(
        "Verify the audit hash chains",
        "Re-hashes the tenant's `audit_logs` and `admin_audit_log` chains in batches (constant memory): each row stores SHA-256(previous hash + canonical JSON of the row), so an altered payload, a deleted row or a reordered row is found and named in `first_invalid_id`. The same verifier answers GET /api/compliance/integrity and `agent-platform audit verify`. Security Officer."
      )),
    HttpApiEndpoint.get("adoption", "/adoption", {
      query: {
        days: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(90)))
          .annotate({ description: "Integer 1 to 90, default 30; anything else is 400" })
      },
      success: Adoption,
      error: [InvalidRequest]
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc(
        "Adoption metrics",
        "Per UTC day of the last `days` days (today included): active users, messages and action executions, the totals and a per-space breakdown (spaces with activity). A user is active on a day when they sent a chat message or triggered or confirmed an action. Admin."
      ))
  )
  .middleware(SessionAuth)
  .prefix("/api/audit")
  .annotateMerge(OpenApi.annotations({
    title: "Audit",
    description:
      "The tenant's two append-only audit hash chains (`audit_logs`, `admin_audit_log`) and their verification (Security Officer), and adoption figures (administrators)."
  }))
{}
