import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { HealthDegraded, HealthOk } from "./Health.ts"

/** `GET /health`, no authentication. */
export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("health", "/health", { success: [HealthOk, HealthDegraded] }).annotateMerge(
      OpenApi.annotations({
        summary: "Service health",
        description:
          "Checks the database and the key-value store with short timeouts (503 with `status: degraded` when one fails), reports the outbound circuit breaker and the last cycle of the `jobs` and `api` workers. A stale or unknown cron never changes `status` or the status code."
      })
    )
  )
  .annotateMerge(OpenApi.annotations({
    title: "Health",
    description: "Liveness and readiness of the service and its dependencies; no authentication."
  }))
{}
