import { Api, Health as HealthSchema } from "@agent-platform/domain"
import { Effect, Schema } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Health } from "./Health.ts"

const encodeOk = Schema.encodeSync(HealthSchema.HealthOk)
const encodeDegraded = Schema.encodeSync(HealthSchema.HealthDegraded)
const encoder = new TextEncoder()

export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const health = yield* Health
    // Callers share one report per reuse window (Health.ts): it is encoded once, when it changes.
    let last: { readonly report: HealthSchema.HealthReport; readonly bytes: Uint8Array } | undefined
    const encoded = (report: HealthSchema.HealthReport) => {
      if (last?.report !== report) {
        const json = report.status === "ok" ? encodeOk(report) : encodeDegraded(report)
        last = { report, bytes: encoder.encode(JSON.stringify(json)) }
      }
      return last.bytes
    }
    return handlers.handle("health", () =>
      Effect.map(health.report, (report) =>
        HttpServerResponse.uint8Array(encoded(report), {
          status: report.status === "ok" ? 200 : 503,
          contentType: "application/json"
        })))
  }))
