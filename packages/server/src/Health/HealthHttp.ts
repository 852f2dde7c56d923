import { Api, Health as HealthSchema } from "@agent-platform/domain"
import { Effect, Schema } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Health } from "./Health.ts"

const encodeOk = Schema.encodeSync(HealthSchema.HealthOk)
const encodeDegraded = Schema.encodeSync(HealthSchema.HealthDegraded)

const toResponse = (report: HealthSchema.HealthReport) =>
  HttpServerResponse.text(
    JSON.stringify(report.status === "ok" ? encodeOk(report) : encodeDegraded(report)),
    { status: report.status === "ok" ? 200 : 503, contentType: "application/json" }
  )

export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const health = yield* Health
    // Callers share one report per reuse window (Health.ts): its response is made once, when it changes.
    let last:
      | { readonly report: HealthSchema.HealthReport; readonly response: HttpServerResponse.HttpServerResponse }
      | undefined
    const response = (report: HealthSchema.HealthReport) => {
      if (last?.report !== report) last = { report, response: toResponse(report) }
      return last.response
    }
    return handlers.handle("health", () => Effect.map(health.report, response))
  }))
