import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"

export const Csv = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv" }))
export const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

const IsoDate = Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date YYYY-MM-DD" }))

/** Data exports (`/api/export`, admin). CSV is RFC 4180. */
export class ExportsApi extends HttpApiGroup.make("exports")
  .add(
    HttpApiEndpoint.get("conversations", "/conversations", {
      query: {
        from: Schema.optionalKey(IsoDate).annotate({ description: "Default 30 days ago" }),
        to: Schema.optionalKey(IsoDate).annotate({ description: "Default today" }),
        group_id: Schema.optionalKey(Schema.String).annotate({ description: "A space id" })
      },
      success: Csv,
      error: [InvalidRequest, NotFound, NotImplemented]
    }).annotateMerge(doc("Export conversations as CSV", "Columns: chat_id, message_id, created_at, space_code, agent_name, role, author, content.")),
    HttpApiEndpoint.get("metrics", "/metrics", { success: Csv, error: [NotImplemented] })
      .annotateMerge(doc("Export metrics as CSV", "Per day: date, messages, chats, action_executions, successful_action_executions, tokens_input, tokens_output.")),
    HttpApiEndpoint.get("roiReport", "/roi-report", { success: Html, error: [NotImplemented] })
      .annotateMerge(doc("Printable ROI report (HTML)"))
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/export")
  .annotateMerge(OpenApi.annotations({ title: "Exports" }))
{}
