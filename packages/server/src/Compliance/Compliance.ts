/**
 * The compliance pack (flag `feature_compliance_pack`; the Security Officer
 * role is checked by the session middleware from the endpoint annotation):
 * decision provenance, a page at a time or streamed as a download, the
 * integrity of both audit chains (AuditLog's one verifier), and the
 * human-in-the-loop map of the catalog.
 */
import { type Compliance as Domain, Errors } from "@agent-platform/domain"
import { Context, Effect, Layer, Stream } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLog } from "../Audit/AuditLog.ts"
import { csvBody, csvPageSize, jsonArrayBody } from "../Exports/Csv.ts"
import type { Download } from "../Exports/Download.ts"
import { between, lastDays } from "../Exports/Period.ts"
import { isUuid } from "../Platform/Ids.ts"
import { ComplianceRepo, positionOf } from "./ComplianceRepo.ts"
import { FeatureGate } from "./FeatureGate.ts"
import { csvHeader, decodeCursor, encodeCursor, toCsvRow, toProvenanceRow } from "./Provenance.ts"

export const defaultPageSize = 100
/** Rows per database read while exporting as JSON (CSV reads `csvPageSize`). */
export const exportBatchSize = 2000

export interface ProvenanceRequest {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly action_id?: string | undefined
  readonly supervision?: Domain.Supervision | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export class Compliance extends Context.Service<Compliance, {
  /**
   * 403 naming the flag unless `feature_compliance_pack` is on: asked once per
   * request by the group's middleware (CompliancePackFlag.ts), before the
   * query is decoded; the operations below assume it was asked.
   */
  readonly requireEnabled: (tenantId: string) => Effect.Effect<void, Errors.FeatureDisabled>
  readonly provenance: (
    tenantId: string,
    request: ProvenanceRequest
  ) => Effect.Effect<Domain.Provenance, Errors.InvalidRequest | SqlError>
  readonly integrity: (tenantId: string) => Effect.Effect<Domain.Integrity, SqlError>
  readonly hitlMap: (tenantId: string, days: number) => Effect.Effect<Domain.HitlMap, SqlError>
  readonly export: (
    tenantId: string,
    request: { readonly format: "csv" | "json"; readonly from?: string | undefined; readonly to?: string | undefined }
  ) => Effect.Effect<Download, Errors.InvalidRequest>
}>()("@agent-platform/server/Compliance/Compliance") {
  static readonly layer = Layer.effect(
    Compliance,
    Effect.gen(function*() {
      const repo = yield* ComplianceRepo
      const audit = yield* AuditLog
      const gate = yield* FeatureGate
      const requireEnabled = (tenantId: string) => gate.require(tenantId, "feature_compliance_pack")

      const provenance = Effect.fn("Compliance.provenance")(function*(tenantId: string, request: ProvenanceRequest) {
        const period = yield* between(request.from, request.to)
        if (request.action_id !== undefined && !isUuid(request.action_id)) {
          return yield* new Errors.InvalidRequest({ error: `action_id: ${request.action_id} is not an action id` })
        }
        const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor)
        if (request.cursor !== undefined && after === undefined) {
          return yield* new Errors.InvalidRequest({
            error: "cursor: not a cursor this endpoint issued; pass next_cursor as it came"
          })
        }
        const limit = request.limit ?? defaultPageSize
        const rows = yield* repo.page({
          tenantId,
          start: period.start,
          end: period.end,
          actionId: request.action_id,
          supervision: request.supervision,
          after,
          limit
        })
        return {
          count: rows.length,
          rows: rows.map(toProvenanceRow),
          next_cursor: rows.length < limit ? null : encodeCursor(positionOf(rows[rows.length - 1]))
        }
      })

      const integrity = Effect.fn("Compliance.integrity")(function*(tenantId: string) {
        const auditLogs = yield* audit.verify("audit_logs", tenantId)
        const adminAuditLog = yield* audit.verify("admin_audit_log", tenantId)
        return { valid: auditLogs.valid && adminAuditLog.valid, audit_logs: auditLogs, admin_audit_log: adminAuditLog }
      })

      const hitlMap = Effect.fn("Compliance.hitlMap")(function*(tenantId: string, days: number) {
        const period = lastDays(days)
        const actions = yield* repo.executionsByAction(tenantId, period.start, period.end)
        return {
          days,
          from: period.from,
          to: period.to,
          actions: actions.map((a) => {
            const mismatches = {
              confirm_without_confirmation: a.hitl_mode === "confirm" ? a.unconfirmed : 0,
              shadow_with_real_call: a.hitl_mode === "shadow" ? a.real_calls : 0
            }
            return {
              action_id: a.action_id,
              action_name: a.action_name,
              is_active: a.is_active,
              config: { version: a.hitl_version, mode: a.hitl_mode },
              executions: {
                human_confirmed: a.human_confirmed,
                human_triggered_auto: a.human_triggered_auto,
                autonomous: a.autonomous,
                shadow: a.shadow
              },
              mismatches,
              mismatch: mismatches.confirm_without_confirmation > 0 || mismatches.shadow_with_real_call > 0
            }
          })
        }
      })

      const exportProvenance = Effect.fn("Compliance.export")(function*(
        tenantId: string,
        request: {
          readonly format: "csv" | "json"
          readonly from?: string | undefined
          readonly to?: string | undefined
        }
      ) {
        const period = yield* between(request.from, request.to)
        const pages = repo.pages({
          tenantId,
          start: period.start,
          end: period.end,
          limit: request.format === "csv" ? csvPageSize : exportBatchSize
        })
        return {
          filename: `provenance-${period.from}-${period.to}.${request.format}`,
          contentType: request.format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
          body: request.format === "csv"
            ? csvBody(csvHeader, toCsvRow, pages)
            : jsonArrayBody(Stream.map(pages, (page) => page.map(toProvenanceRow)))
        } satisfies Download
      })

      return Compliance.of({ requireEnabled, provenance, integrity, hitlMap, export: exportProvenance })
    })
  ).pipe(Layer.provide(ComplianceRepo.layer))
}
