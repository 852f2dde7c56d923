import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { FeatureDisabled, InvalidRequest } from "../Errors.ts"
import { Csv, DateRange } from "../Exports/Export.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { ExportFormat, HitlMap, Integrity, Provenance, ProvenanceRow, Supervision } from "./Compliance.ts"
import { CompliancePackEnabled } from "./CompliancePack.ts"

const flagged =
  "403 when the tenant's `feature_compliance_pack` is off or the caller is not a Security Officer (r_security_officer or r_superadmin)."

/** The compliance pack (`/api/compliance`), Security Officer, behind `feature_compliance_pack`. */
export class ComplianceApi extends HttpApiGroup.make("compliance")
  .add(
    HttpApiEndpoint.get("provenance", "/provenance", {
      query: {
        ...DateRange,
        action_id: Schema.optionalKey(Schema.String),
        supervision: Schema.optionalKey(Supervision),
        cursor: Schema.optionalKey(Schema.String).annotate({ description: "`next_cursor` of the previous page" }),
        limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(1000)))
          .annotate({ description: "Rows per page, 1 to 1000, default 100" })
      },
      success: Provenance,
      error: [InvalidRequest, FeatureDisabled]
    }).annotateMerge(doc(
      "Decision provenance",
      `Per execution, oldest first: who triggered it (a key, a user, or an agent in a chat or room, with the human or key it acted for), who confirmed it (the verbatim text and when), the human-in-the-loop configuration in force (version and mode) and the supervision class. \`from\`/\`to\` are UTC dates (YYYY-MM-DD, both included; default the last 30 days). Page with \`cursor\`. ${flagged}`
    )),
    HttpApiEndpoint.get("integrity", "/integrity", { success: Integrity, error: [FeatureDisabled] })
      .annotateMerge(doc(
        "Hash-chain integrity",
        `Both chains (\`audit_logs\`, \`admin_audit_log\`) re-hashed in batches with constant memory: valid, entries checked and invalid, \`first_invalid_id\` (null when valid), the head hash and when it was verified. The same verifier as GET /api/audit/verify. ${flagged}`
      )),
    HttpApiEndpoint.get("hitlMap", "/hitl-map", {
      query: {
        days: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(365)))
          .annotate({ description: "The period, in days up to today; default 30" })
      },
      success: HitlMap,
      error: [InvalidRequest, FeatureDisabled]
    }).annotateMerge(doc(
      "Human-in-the-loop map",
      `Per action: its current configuration (mode and version), its executions in the period per supervision class, and mismatches between the two, flagged: configured \`confirm\` while executions ran without a human confirmation (direct API-key and MCP calls bypass the chat's confirmation, as do executions from before the switch), configured \`shadow\` while executions made real calls. Each provenance row carries the configuration in force when it ran. ${flagged}`
    )),
    HttpApiEndpoint.get("export", "/export", {
      query: {
        ...DateRange,
        format: Schema.optionalKey(ExportFormat).annotate({
          description: "`csv` (default) or `json`; anything else is 400"
        })
      },
      // Both media types the download may have: CSV by default, JSON with `format=json`.
      success: [Csv, Schema.Array(ProvenanceRow)],
      error: [InvalidRequest, FeatureDisabled]
    }).annotateMerge(doc(
      "Download the provenance report",
      `Every provenance row of the period (default the last 30 days), streamed from the database in batches, as an attachment named \`provenance-<from>-<to>.csv\` (or \`.json\`). CSV: RFC 4180, CRLF line ends, a header row, fields quoted when they hold a comma, a quote or a line break; nested values (triggered_by, on_behalf_of, confirmed_by, hitl_snapshot) flattened into columns. Against spreadsheet formula injection (OWASP), a text cell that begins with \`=\`, \`+\`, \`-\`, \`@\`, a tab or a carriage return is prefixed with a single quote \`'\`. JSON: an array of provenance rows (application/json). ${flagged}`
    ))
  )
  .annotateEndpoints(RequiredRole, "security_officer")
  .middleware(CompliancePackEnabled)
  .middleware(SessionAuth)
  .prefix("/api/compliance")
  .annotateMerge(OpenApi.annotations({
    title: "Compliance",
    description:
      "The compliance pack for Security Officers: provenance of every action execution (who triggered, who confirmed, the human-in-the-loop configuration, the supervision class), the integrity of both audit hash chains, the human-in-the-loop map and a streamed export. Behind the tenant flag `feature_compliance_pack`."
  }))
{}
