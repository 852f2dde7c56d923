/**
 * Data exports for administrators: conversations and daily metrics as CSV
 * streamed from the database, the printable ROI report, and the tenant
 * settings the report's estimates use.
 */
import { Errors, type Exports as Domain, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLog } from "../Audit/AuditLog.ts"
import { csvBody, csvPageSize } from "./Csv.ts"
import type { Download } from "./Download.ts"
import { type DayMetricsRow, ExportsRepo, type MessageExportRow } from "./ExportsRepo.ts"
import { between, daysOf, lastDays } from "./Period.ts"
import { renderRoiReport } from "./RoiReport.ts"

const conversationsHeader = [
  "chat_id",
  "message_id",
  "space_code",
  "agent_name",
  "role",
  "author",
  "content",
  "created_at"
]

const conversationRow = (m: MessageExportRow) => [
  m.chat_id,
  m.id,
  m.space_code,
  m.agent_name,
  m.role,
  m.author,
  m.content,
  m.created_at.toISOString()
]

const metricsHeader = [
  "date",
  "space_id",
  "space_code",
  "chats",
  "messages",
  "tokens_input",
  "tokens_output",
  "actions_succeeded",
  "actions_failed"
]

type Range = { readonly from?: string | undefined; readonly to?: string | undefined }

export class Exports extends Context.Service<Exports, {
  readonly conversations: (
    tenantId: string,
    request: Range & { readonly group_id?: string | undefined }
  ) => Effect.Effect<Download, Errors.InvalidRequest | Errors.NotFound | SqlError>
  readonly metrics: (tenantId: string, request: Range) => Effect.Effect<Download, Errors.InvalidRequest>
  readonly roiReport: (tenantId: string, days: number) => Effect.Effect<string, SqlError>
  readonly roiSettings: (tenantId: string) => Effect.Effect<Domain.RoiSettings, SqlError>
  readonly updateRoiSettings: (
    admin: UserPrincipal,
    changes: typeof Domain.UpdateRoiSettings.Type
  ) => Effect.Effect<Domain.RoiSettings, SqlError>
}>()("@agent-platform/server/Exports/Exports") {
  static readonly layer = Layer.effect(
    Exports,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ExportsRepo
      const audit = yield* AuditLog

      const conversations = Effect.fn("Exports.conversations")(
        function*(tenantId: string, request: Range & { readonly group_id?: string | undefined }) {
          const period = yield* between(request.from, request.to)
          const ref = request.group_id
          const spaceId = ref === undefined ? undefined : yield* repo.spaceIdOf(tenantId, ref)
          if (ref !== undefined && spaceId === undefined) {
            return yield* new Errors.NotFound({
              error: `space ${ref} not found: group_id takes a space's id or code (GET /api/admin/spaces lists them)`
            })
          }
          const pages = repo.messagePages({
            tenantId,
            start: period.start,
            end: period.end,
            spaceId,
            batchSize: csvPageSize
          })
          return {
            filename: `conversations-${period.from}-${period.to}.csv`,
            contentType: "text/csv; charset=utf-8",
            body: csvBody(conversationsHeader, conversationRow, pages)
          } satisfies Download
        }
      )

      const metrics = Effect.fn("Exports.metrics")(function*(tenantId: string, request: Range) {
        const period = yield* between(request.from, request.to)
        // One grouped query per day: the body streams day by day, however long the period.
        const perDay = Stream.fromIterable(daysOf(period)).pipe(
          Stream.mapEffect((date) => {
            const start = new Date(`${date}T00:00:00.000Z`)
            const end = new Date(start.getTime() + 86_400_000)
            return Effect.map(repo.dayMetrics(tenantId, start, end), (rows) => rows.map((row) => ({ date, row })))
          })
        )
        return {
          filename: `metrics-${period.from}-${period.to}.csv`,
          contentType: "text/csv; charset=utf-8",
          body: csvBody(metricsHeader, ({ date, row }: { date: string; row: DayMetricsRow }) => [
            date,
            row.space_id,
            row.space_code,
            row.chats,
            row.messages,
            row.tokens_input,
            row.tokens_output,
            row.actions_succeeded,
            row.actions_failed
          ], perDay)
        } satisfies Download
      })

      const roiReport = Effect.fn("Exports.roiReport")(function*(tenantId: string, days: number) {
        const period = lastDays(days)
        const figures = yield* repo.roiFigures(tenantId, period.start, period.end)
        return renderRoiReport({
          tenantName: yield* repo.tenantName(tenantId),
          period,
          settings: yield* repo.roiSettings(tenantId),
          figures,
          generatedAt: new Date()
        })
      })

      const updateRoiSettings = Effect.fn("Exports.updateRoiSettings")(function*(
        admin: UserPrincipal,
        changes: typeof Domain.UpdateRoiSettings.Type
      ) {
        return yield* Effect.gen(function*() {
          const current = yield* repo.roiSettingsForUpdate(admin.tenantId)
          const saved = yield* repo.saveRoiSettings(admin.tenantId, { ...current, ...changes })
          yield* audit.append("admin_audit_log", {
            tenantId: admin.tenantId,
            event: "tenant.roi_settings_updated",
            actor: `user:${admin.userId}`,
            target: `tenant:${admin.tenantId}`,
            data: { ...saved }
          })
          return saved
        }).pipe(sql.withTransaction)
      })

      return Exports.of({ conversations, metrics, roiReport, roiSettings: repo.roiSettings, updateRoiSettings })
    })
  ).pipe(Layer.provide(ExportsRepo.layer))
}
