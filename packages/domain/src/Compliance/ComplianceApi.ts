import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { FeatureDisabled, InvalidRequest, NotImplemented } from "../Errors.ts"
import { Csv } from "../Exports/ExportsApi.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { HitlMap, Integrity, Provenance } from "./Compliance.ts"

const range = {
  from: Schema.optionalKey(Schema.String).annotate({ description: "ISO date; default 30 days ago" }),
  to: Schema.optionalKey(Schema.String).annotate({ description: "ISO date; default now" })
}

/** The compliance pack (`/api/compliance`), Security Officer, behind `feature_compliance_pack`. */
export class ComplianceApi extends HttpApiGroup.make("compliance")
  .add(
    HttpApiEndpoint.get("provenance", "/provenance", {
      query: { ...range, limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(1000))) },
      success: Provenance,
      error: [InvalidRequest, FeatureDisabled, NotImplemented]
    }).annotateMerge(doc("Decision provenance", "Per execution: who triggered it, who confirmed it (verbatim text, human-in-the-loop config snapshot) and the supervision class. 403 flag off or role missing.")),
    HttpApiEndpoint.get("integrity", "/integrity", { success: Integrity, error: [FeatureDisabled, NotImplemented] })
      .annotateMerge(doc("Hash-chain integrity", "Both chains, with first_invalid_id on failure.")),
    HttpApiEndpoint.get("hitlMap", "/hitl-map", { success: HitlMap, error: [FeatureDisabled, NotImplemented] })
      .annotateMerge(doc("Human-in-the-loop map", "Configured confirmation versus observed executions per action.")),
    HttpApiEndpoint.get("export", "/export", {
      query: { ...range, format: Schema.optionalKey(Schema.Literals(["csv", "json"])) },
      success: [Provenance, Csv],
      error: [InvalidRequest, FeatureDisabled, NotImplemented]
    }).annotateMerge(doc("Download the provenance report", "CSV (RFC 4180) or JSON, as an attachment."))
  )
  .annotateEndpoints(RequiredRole, "security_officer")
  .middleware(SessionAuth)
  .prefix("/api/compliance")
  .annotateMerge(OpenApi.annotations({ title: "Compliance" }))
{}
