/** The handlers of `/api/export` (admin): streamed CSV downloads, the ROI page and its settings. */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { downloadResponse } from "./Download.ts"
import { Exports } from "./Exports.ts"

/** The report loads nothing: no script, no external asset; inline styles and SVG only. */
const reportPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

export const ExportsHttp = HttpApiBuilder.group(Api, "exports", (handlers) =>
  Effect.gen(function*() {
    const exports = yield* Exports
    return handlers
      .handle("conversations", ({ query }) =>
        Effect.flatMap(currentUser, (admin) =>
          Effect.map(exports.conversations(admin.tenantId, query), downloadResponse)).pipe(orDieOnSql))
      .handle("metrics", ({ query }) =>
        Effect.flatMap(currentUser, (admin) =>
          Effect.map(exports.metrics(admin.tenantId, query), downloadResponse)))
      .handle("roiReport", ({ query }) =>
        Effect.flatMap(currentUser, (admin) =>
          Effect.map(exports.roiReport(admin.tenantId, query.days ?? 30), (html) =>
            HttpServerResponse.text(html, {
              contentType: "text/html; charset=utf-8",
              headers: { "content-security-policy": reportPolicy, "cache-control": "no-store" }
            }))).pipe(orDieOnSql))
      .handle("roiSettings", () =>
        Effect.flatMap(currentUser, (admin) =>
          exports.roiSettings(admin.tenantId)).pipe(orDieOnSql))
      .handle("updateRoiSettings", ({ payload }) =>
        Effect.flatMap(currentUser, (admin) =>
          exports.updateRoiSettings(admin, payload)).pipe(orDieOnSql))
  }))
