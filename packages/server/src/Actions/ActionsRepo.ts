/**
 * The SQL of action execution: the catalog entry a caller may run, the
 * ciphertexts of the tenant secrets its headers reference, and the record of
 * every execution (`action_executions`). Every query filters by the tenant of
 * the caller's principal.
 */
import { ActionAdmin, Actions, type Compliance } from "@agent-platform/domain"
import { Context, Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as SqlSchema from "effect/sql/SqlSchema"
import { isUuid } from "../Platform/Ids.ts"

/** An active action of the tenant, and whether the caller's space may run it. */
export const ExecutableAction = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  http_method: Actions.HttpMethodName,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  parameters: Schema.Array(Actions.ActionParameter),
  /** The human-in-the-loop configuration in force. */
  hitl_mode: ActionAdmin.HitlMode,
  hitl_version: Schema.Int,
  /** True for callers without a space; else whether an agent of the space has the action. */
  in_space: Schema.Boolean
})
export type ExecutableAction = typeof ExecutableAction.Type

const FindRequest = Schema.Struct({
  tenantId: Schema.String,
  actionId: Schema.String,
  spaceId: Schema.NullOr(Schema.String)
})

/** A key, user or agent named in a record, with its name then. */
export interface NamedParty {
  readonly type: "key" | "user" | "agent"
  readonly id: string
  readonly name: string | null
}

/** One execution, as recorded after the remote call returned (or, in shadow mode, instead of it). */
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
  readonly channel: Compliance.Channel
  readonly chatId: string | null
  readonly agentId: string | null
  readonly spaceId: string | null
  readonly triggeredBy: NamedParty
  readonly onBehalfOf: NamedParty | null
  readonly confirmation: {
    readonly userId: string | null
    readonly keyId: string | null
    readonly name: string | null
    readonly text: string
    readonly asked: string | null
    readonly at: Date
  } | null
  readonly hitlVersion: number
  readonly hitlMode: ActionAdmin.HitlMode
  readonly remoteCalled: boolean
  readonly shadowRequest: unknown
}

/** Names (and spaces) of the keys, users and agents an execution record names. */
export interface PartyNames {
  readonly users: ReadonlyMap<string, string>
  readonly keys: ReadonlyMap<string, { readonly name: string; readonly spaceId: string | null }>
  readonly agents: ReadonlyMap<string, { readonly name: string; readonly spaceId: string }>
}

export class ActionsRepo extends Context.Service<ActionsRepo, {
  readonly findExecutable: (request: typeof FindRequest.Type) => Effect.Effect<
    ExecutableAction | undefined,
    SqlError | Schema.SchemaError
  >
  readonly secretCiphertexts: (
    tenantId: string,
    names: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, string>, SqlError>
  readonly insertExecution: (record: ExecutionRecord) => Effect.Effect<void, SqlError>
  /** The tenant's users, keys and agents among the ids (ids that are not UUIDs are skipped). */
  readonly partyNames: (
    tenantId: string,
    ids: {
      readonly users: ReadonlyArray<string>
      readonly keys: ReadonlyArray<string>
      readonly agents: ReadonlyArray<string>
    }
  ) => Effect.Effect<PartyNames, SqlError>
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
            SELECT a.id, a.name, a.http_method, a.url, a.headers, a.parameters, a.hitl_mode, a.hitl_version,
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
              SELECT name, ciphertext FROM tenant_secrets WHERE tenant_id = ${tenantId} AND name IN ${sql.in(names)}`
            .pipe(
              Effect.map((rows) => new Map(rows.map((row) => [row.name, row.ciphertext])))
            )

      const insertExecution = (r: ExecutionRecord) =>
        sql`
          INSERT INTO action_executions (id, tenant_id, action_id, action_name, caller_kind, caller_id, params_digest,
            status_code, success, error, duration_ms, supervision, channel, chat_id, agent_id, space_id,
            trigger_type, trigger_id, trigger_name, on_behalf_type, on_behalf_id, on_behalf_name,
            confirmed_by_user_id, confirmed_by_key_id, confirmed_by_name, confirmation_text, confirmation_asked, confirmed_at,
            hitl_version, hitl_mode, remote_called, shadow_request)
          VALUES (${r.id}, ${r.tenantId}, ${r.actionId}, ${r.actionName}, ${r.callerKind}, ${r.callerId}, ${r.paramsDigest},
            ${r.statusCode}, ${r.success}, ${r.error}, ${r.durationMs}, ${r.supervision}, ${r.channel}, ${r.chatId},
            ${r.agentId}, ${r.spaceId},
            ${r.triggeredBy.type}, ${r.triggeredBy.id}, ${r.triggeredBy.name},
            ${r.onBehalfOf?.type ?? null}, ${r.onBehalfOf?.id ?? null}, ${r.onBehalfOf?.name ?? null},
            ${r.confirmation?.userId ?? null}, ${r.confirmation?.keyId ?? null}, ${r.confirmation?.name ?? null},
            ${r.confirmation?.text ?? null}, ${r.confirmation?.asked ?? null}, ${r.confirmation?.at ?? null},
            ${r.hitlVersion}, ${r.hitlMode}, ${r.remoteCalled},
            ${
          r.shadowRequest === null || r.shadowRequest === undefined ? null : JSON.stringify(r.shadowRequest)
        }::jsonb)`
          .pipe(Effect.asVoid)

      const uuids = (ids: ReadonlyArray<string>) => [...new Set(ids.filter(isUuid))]

      const partyNames = (
        tenantId: string,
        ids: {
          readonly users: ReadonlyArray<string>
          readonly keys: ReadonlyArray<string>
          readonly agents: ReadonlyArray<string>
        }
      ) =>
        Effect.gen(function*() {
          const [userIds, keyIds, agentIds] = [uuids(ids.users), uuids(ids.keys), uuids(ids.agents)]
          const users = userIds.length === 0 ? [] : yield* sql<{ id: string; nombre: string }>`
            SELECT id, nombre FROM users WHERE tenant_id = ${tenantId} AND id IN ${sql.in(userIds)}`
          const keys = keyIds.length === 0 ? [] : yield* sql<{ id: string; name: string; space_id: string | null }>`
            SELECT id, name, space_id FROM api_keys WHERE tenant_id = ${tenantId} AND id IN ${sql.in(keyIds)}`
          const agents = agentIds.length === 0 ? [] : yield* sql<{ id: string; name: string; space_id: string }>`
            SELECT id, name, space_id FROM agents WHERE tenant_id = ${tenantId} AND id IN ${sql.in(agentIds)}`
          return {
            users: new Map(users.map((row) => [row.id, row.nombre])),
            keys: new Map(keys.map((row) => [row.id, { name: row.name, spaceId: row.space_id }])),
            agents: new Map(agents.map((row) => [row.id, { name: row.name, spaceId: row.space_id }]))
          } satisfies PartyNames
        })

      return ActionsRepo.of({ findExecutable, secretCiphertexts, insertExecution, partyNames })
    })
  )
}
