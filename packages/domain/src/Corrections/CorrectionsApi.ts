import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { Conflict, FeatureDisabled, InvalidRequest, NotFound } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import {
  CorrectionCreated,
  CorrectionStatus,
  CreateCorrection,
  DecisionRecord,
  DecisionRecordList,
  ResolveCorrection
} from "./Correction.ts"
import { DecisionRecordsEnabled } from "./DecisionRecords.ts"

const id = { id: Schema.String }
const flag =
  "403 `FeatureDisabled` when the tenant's `feature_decision_records` is off, before the body or query is looked at."
const rooms =
  "A room's chat is read by its participants alone (administrators too must take part), a classic chat by anyone of the tenant."

/** Decision records (`feature_decision_records`). */
export class CorrectionsApi extends HttpApiGroup.make("corrections")
  .add(
    HttpApiEndpoint.post("create", "/api/chats/:id/corrections", {
      params: id,
      payload: CreateCorrection,
      success: CorrectionCreated.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, FeatureDisabled, NotFound]
    }).annotateMerge(doc(
      "Correct an agent message",
      `Files an open decision record; \`original_output\` is copied from the stored agent message. 404 for an unknown chat, a chat the caller cannot read or a message not in it; 400 for a message that is not the agent's or a \`corrected_output\` that is empty or only white space. ${rooms} ${flag}`
    )),
    HttpApiEndpoint.get("listForAgent", "/api/agents/:id/corrections", {
      params: id,
      query: { status: Schema.optionalKey(CorrectionStatus) },
      success: DecisionRecordList,
      error: [InvalidRequest, FeatureDisabled, NotFound]
    }).annotateMerge(
      doc(
        "An agent's decision records",
        `Newest first, optionally of one status, of the chats the caller can read: ${rooms} 404 for an unknown agent. ${flag}`
      )
    ),
    HttpApiEndpoint.patch("resolve", "/api/corrections/:id", {
      params: id,
      payload: ResolveCorrection,
      success: DecisionRecord,
      error: [InvalidRequest, FeatureDisabled, NotFound, Conflict]
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc(
        "Accept or reject a correction",
        `Admin. \`open\` → \`accepted\` or \`rejected\`, once; any other transition is 409. Accepting adds the correction to the agent's knowledge (a knowledge file, ingested like any other): once it is ready, the same question gets the corrected answer. Recorded in admin_audit_log. 404 for a correction on a chat the caller cannot read. ${rooms} ${flag}`
      ))
  )
  .middleware(DecisionRecordsEnabled)
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Corrections",
    description:
      "Decision records: people correct an agent's answer; an administrator accepts or rejects the correction, and an accepted one becomes part of the agent's knowledge. Behind the tenant flag `feature_decision_records`."
  }))
{}
