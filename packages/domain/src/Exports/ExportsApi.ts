import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { StorableString } from "../Text.ts"
import { Csv, DateRange, Html, RoiSettings, UpdateRoiSettings } from "./Export.ts"

export { Csv, Html } from "./Export.ts"

const csvRules =
  "Streamed as it is read (batches from the database, never built in memory). RFC 4180: CRLF line ends, a header row, fields quoted when they hold a comma, a quote or a line break. Against spreadsheet formula injection (OWASP), a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with a single quote `'`. Bad dates (or `from` after `to`) are 400."

/** Data exports (`/api/export`, admin). */
export class ExportsApi extends HttpApiGroup.make("exports")
  .add(
    HttpApiEndpoint.get("conversations", "/conversations", {
      query: {
        ...DateRange,
        group_id: Schema.optionalKey(StorableString).annotate({ description: "Only this space (its id or code)" })
      },
      success: Csv,
      error: [InvalidRequest, NotFound]
    }).annotateMerge(doc(
      "Export conversations as CSV",
      `One row per message, oldest first: chat_id, message_id, space_code, agent_name, role (user or agent), author (the user's name, \`API key <name>\` for a chat over a key, or the agent's name), content, created_at (ISO 8601 UTC). 404 for an unknown \`group_id\`. ${csvRules}`
    )),
    HttpApiEndpoint.get("metrics", "/metrics", { query: DateRange, success: Csv, error: [InvalidRequest] })
      .annotateMerge(doc(
        "Export metrics as CSV",
        `One row per UTC day and space with activity: date, space_id, space_code, chats (with a message that day), messages, tokens_input, tokens_output, actions_succeeded, actions_failed. Executions outside any space (an unbound key's direct calls) are in rows with an empty space. ${csvRules}`
      )),
    HttpApiEndpoint.get("roiReport", "/roi-report", {
      query: {
        days: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(365)))
          .annotate({ description: "The period in days up to today, 1 to 365; default 30" })
      },
      success: Html,
      error: [InvalidRequest]
    }).annotateMerge(doc(
      "Printable ROI report (HTML)",
      "A self-contained page (inline CSS with print rules, inline SVG charts, no external asset, no script): messages answered, actions automated per supervision class, estimated hours saved (the tenant's `minutes_saved_per_message` and `minutes_saved_per_action`), the token cost when `token_cost_per_1k` is set, the trend per week, and the top agents and actions."
    )),
    HttpApiEndpoint.get("roiSettings", "/roi-settings", { success: RoiSettings })
      .annotateMerge(
        doc(
          "The ROI report's settings",
          "Minutes saved per message and per action, and the token cost per 1,000 tokens."
        )
      ),
    HttpApiEndpoint.put("updateRoiSettings", "/roi-settings", {
      payload: UpdateRoiSettings,
      success: RoiSettings,
      error: [InvalidRequest]
    })
      .annotateMerge(
        doc("Change the ROI report's settings", "Fields left out keep their value; recorded in admin_audit_log.")
      )
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/export")
  .annotateMerge(OpenApi.annotations({
    title: "Exports",
    description:
      "Streamed CSV exports of conversations and daily metrics, the printable ROI report (self-contained HTML) and its settings (administrators)."
  }))
{}
