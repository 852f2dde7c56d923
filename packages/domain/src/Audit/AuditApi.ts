import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { Adoption, AuditVerification } from "./Audit.ts"

/** Audit (`/api/audit`). */
export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("verify", "/verify", { success: AuditVerification, error: [NotImplemented] })
      .annotate(RequiredRole, "security_officer")
      .annotateMerge(doc(
        "Verify the audit hash chains",
        "Re-hashes the tenant's `audit_logs` and `admin_audit_log` chains: each row stores SHA-256(previous hash + canonical JSON of the row). Security Officer."
      )),
    HttpApiEndpoint.get("adoption", "/adoption", {
      query: {
        days: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(90)))
          .annotate({ description: "Default 30, maximum 90" })
      },
      success: Adoption,
      error: [InvalidRequest, NotImplemented]
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc("Adoption metrics", "Daily active users, messages, actions and a per-space breakdown."))
  )
  .middleware(SessionAuth)
  .prefix("/api/audit")
  .annotateMerge(OpenApi.annotations({ title: "Audit" }))
{}
