import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { FeatureDisabled, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import { CorrectionCreated, CreateCorrection, DecisionRecord } from "./Correction.ts"

const id = { id: Schema.String }
const errors = [InvalidRequest, FeatureDisabled, NotFound, NotImplemented] as const

/** Corrections (`feature_decision_records`). */
export class CorrectionsApi extends HttpApiGroup.make("corrections")
  .add(
    HttpApiEndpoint.post("create", "/api/chats/:id/corrections", {
      params: id,
      payload: CreateCorrection,
      success: CorrectionCreated.pipe(HttpApiSchema.status(201)),
      error: errors
    }).annotateMerge(doc("Correct an agent message", "Creates an open decision record; `original_output` comes from the stored message.")),
    HttpApiEndpoint.get("listForAgent", "/api/agents/:id/corrections", {
      params: id,
      success: Schema.Array(DecisionRecord),
      error: errors
    }).annotateMerge(doc("An agent's decision records"))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({ title: "Corrections" }))
{}
