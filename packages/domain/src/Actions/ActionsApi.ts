import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc, responseExample } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { ApiKeyAuth, RateLimitClass, RequiredScopes } from "../Security.ts"
import { ActionFailed, actionFailedExample, ActionList, ActionResponse, ExecuteRequest } from "./Action.ts"

/** The actions catalog and direct execution (`/v1/actions`). */
export class ActionsApi extends HttpApiGroup.make("actions")
  .add(
    HttpApiEndpoint.get("list", "/", { success: ActionList, error: [NotImplemented] })
      .annotate(RequiredScopes, ["actions", "actions:read"])
      .annotateMerge(doc("List the action catalog", "The tenant's active actions; not filtered by the key's space.")),
    HttpApiEndpoint.post("execute", "/:id/execute", {
      params: { id: Schema.String },
      payload: ExecuteRequest,
      success: ActionResponse,
      error: [InvalidRequest, NotFound, ActionFailed, NotImplemented]
    })
      .annotate(RequiredScopes, ["actions", "actions:execute"])
      .annotate(RateLimitClass, "execute")
      .annotateMerge(responseExample(502, actionFailedExample))
      .annotateMerge(doc(
        "Execute an action",
        "Runs the remote call directly, bypassing slot-filling. A space-bound key gets 404 for an action outside its space or a nonexistent one (same body); an unbound key gets 502 for a nonexistent action. A remote failure is 502 with an ActionResponse whose `success` is false and `response` the failure message. 400 names missing or mistyped parameters."
      ))
  )
  .middleware(ApiKeyAuth)
  .prefix("/v1/actions")
  .annotateMerge(OpenApi.annotations({
    title: "Actions",
    description:
      "The tenant's action catalog and direct execution of an action against its external system, with an API key."
  }))
{}
