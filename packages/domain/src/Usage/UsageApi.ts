import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotImplemented } from "../Errors.ts"
import { ApiKeyAuth, RequiredScopes } from "../Security.ts"
import { Usage, UsagePeriod } from "./Usage.ts"

/** Usage metrics of the key's tenant (`/v1/usage`). */
export class UsageApi extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("get", "/", {
      query: { period: Schema.optionalKey(UsagePeriod).annotate({ description: "24h, 7d or 30d (default 30d)" }) },
      success: Usage,
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(
      doc(
        "Usage metrics",
        "Message volume, tokens consumed and successful action executions, in total and per space (`by_space`). An execution belongs to the space of its chat, or, when run directly or over MCP with a space-bound key, to the key's space; direct executions with an unbound key count in the total only, so the total may exceed the sum of `by_space`. A space-bound key sees its own space only: the totals equal its one row."
      )
    )
  )
  .annotateEndpoints(RequiredScopes, ["analytics", "usage:read"])
  .middleware(ApiKeyAuth)
  .prefix("/v1/usage")
  .annotateMerge(OpenApi.annotations({
    title: "Usage",
    description:
      "Message, token and action-execution metrics of the tenant, with an API key holding `analytics` or `usage:read`."
  }))
{}
