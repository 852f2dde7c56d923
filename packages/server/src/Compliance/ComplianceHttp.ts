/**
 * The handlers of `/api/compliance` (Security Officer), with the middleware of
 * their flag `feature_compliance_pack`, built on the `Compliance` service.
 */
import { Api } from "@agent-platform/domain"
import { Effect, Layer } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { downloadResponse } from "../Exports/Download.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { Compliance } from "./Compliance.ts"
import { CompliancePackEnabledLive } from "./CompliancePackFlag.ts"

export const ComplianceHttp = HttpApiBuilder.group(Api, "compliance", (handlers) =>
  Effect.gen(function*() {
    const compliance = yield* Compliance
    return handlers
      .handle("provenance", ({ query }) =>
        Effect.flatMap(currentUser, (officer) =>
          compliance.provenance(officer.tenantId, query)).pipe(orDieOnSql))
      .handle("integrity", () =>
        Effect.flatMap(currentUser, (officer) =>
          compliance.integrity(officer.tenantId)).pipe(orDieOnSql))
      .handle("hitlMap", ({ query }) =>
        Effect.flatMap(currentUser, (officer) =>
          compliance.hitlMap(officer.tenantId, query.days ?? 30)).pipe(orDieOnSql))
      .handle("export", ({ query }) =>
        Effect.flatMap(currentUser, (officer) =>
          Effect.map(
            compliance.export(officer.tenantId, { format: query.format ?? "csv", from: query.from, to: query.to }),
            downloadResponse
          )))
  })).pipe(Layer.provide(CompliancePackEnabledLive))
