/**
 * The SQL of action execution: the catalog entry a caller may run, the
 * ciphertexts of the tenant secrets its headers reference, and the record of
 * every execution (`action_executions`). Every query filters by the tenant of
 * the caller's principal.
 */
import { Context, Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as SqlSchema from "effect/sql/SqlSchema"
import { Actions, Compliance } from "@agent-platform/domain"

/** An active action of the tenant, and whether the caller's space may run it. */
export const ExecutableAction = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  http_method: Actions.HttpMethodName,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  parameters: Schema.Array(Actions.ActionParameter),
  /** True for callers without a space; else whether an agent of the space has the action. */
  in_space: Schema.Boolean
})
export type ExecutableAction = typeof ExecutableAction.Type

const FindRequest = Schema.Struct({ tenantId: Schema.String, actionId: Schema.String, spaceId: Schema.NullOr(Schema.String) })

/** One execution, as recorded after the remote call returned. */
export interface ExecutionRecord {
  readonly id: string
  readonly tenantId: string
  readonly actionId: string
  readonly actionName: string
  readonly callerKind: "key" | "user"
  readonly callerId: string
  readonly paramsDigest: string
  readonly statusCode: number
  readonly success: boolean
  readonly error: string | null
  readonly durationMs: number
  readonly supervision: Compliance.Supervision
  readonly chatId: string | null
  readonly confirmationText: string | null
  readonly confirmationSnapshot: unknown
}

export class ActionsRepo extends Context.Service<ActionsRepo, {
  readonly findExecutable: (request: typeof FindRequest.Type) => Effect.Effect<
    ExecutableAction | undefined,
    SqlError | Schema.SchemaError
  >
  readonly secretCiphertexts: (tenantId: string, names: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>, SqlError>
  readonly insertExecution: (record: ExecutionRecord) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Actions/ActionsRepo") {
  static readonly layer = Layer.effect(
    ActionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const find = SqlSchema.findOneOption({
        Request: FindRequest,
        Result: ExecutableAction,
        execute: ({ actionId, spaceId, tenantId }) =>
          sql`
            SELECT a.id, a.name, a.http_method, a.url, a.headers, a.parameters,
              (${spaceId}::uuid IS NULL OR EXISTS (
                SELECT 1 FROM agent_actions aa JOIN agents ag ON ag.id = aa.agent_id
                WHERE aa.action_id = a.id AND ag.space_id = ${spaceId}::uuid AND ag.tenant_id = a.tenant_id
              )) AS in_space
            FROM actions a
            WHERE a.tenant_id = ${tenantId} AND a.id = ${actionId} AND a.is_active`
      })
      const findExecutable = (request: typeof FindRequest.Type) =>
        Effect.map(find(request), (found) => found._tag === "Some" ? found.value : undefined)

      const secretCiphertexts = (tenantId: string, names: ReadonlyArray<string>) =>
        names.length === 0
          ? Effect.succeed(new Map<string, string>())
          : sql<{ name: string; ciphertext: string }>`
              SELECT name, ciphertext FROM tenant_secrets WHERE tenant_id = ${tenantId} AND name IN ${sql.in(names)}`.pipe(
              Effect.map((rows) => new Map(rows.map((row) => [row.name, row.ciphertext])))
            )

      const insertExecution = (r: ExecutionRecord) =>
        sql`
          INSERT INTO action_executions (id, tenant_id, action_id, action_name, caller_kind, caller_id, params_digest,
            status_code, success, error, duration_ms, supervision, chat_id, confirmation_text, confirmation_snapshot)
          VALUES (${r.id}, ${r.tenantId}, ${r.actionId}, ${r.actionName}, ${r.callerKind}, ${r.callerId}, ${r.paramsDigest},
            ${r.statusCode}, ${r.success}, ${r.error}, ${r.durationMs}, ${r.supervision}, ${r.chatId}, ${r.confirmationText},
            ${r.confirmationSnapshot === null || r.confirmationSnapshot === undefined ? null : JSON.stringify(r.confirmationSnapshot)}::jsonb)`
          .pipe(Effect.asVoid)

      return ActionsRepo.of({ findExecutable, secretCiphertexts, insertExecution })
    })
  )
}
