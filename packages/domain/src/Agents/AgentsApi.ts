import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { ApiKeyAuth, RequiredScopes } from "../Security.ts"
import { StorableString } from "../Text.ts"
import { AgentDetail, AgentList } from "./Agent.ts"

/** Agents over the API-key interface (`/v1/agents`). */
export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: { space: Schema.optionalKey(StorableString).annotate({ description: "A space id or code" }) },
      success: AgentList,
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(doc(
      "List agents",
      "All agents of the tenant, or of one space (by id or code; an unknown space lists none). Not limited to the key's own space: a space binding limits which actions a key may run, not what it may read."
    )),
    HttpApiEndpoint.get("get", "/:id", {
      params: { id: Schema.String },
      success: AgentDetail,
      error: [NotFound, NotImplemented]
    }).annotateMerge(doc("Read an agent", "With its actions and knowledge files."))
  )
  .annotateEndpoints(RequiredScopes, ["agents", "agents:read"])
  .middleware(ApiKeyAuth)
  .prefix("/v1/agents")
  .annotateMerge(OpenApi.annotations({
    title: "Agents",
    description: "The tenant's agents, with their actions and knowledge files, with an API key."
  }))
{}
