/**
 * The chat's actions, backed by direct execution's path (ActionRunner): the
 * same records, webhooks and audit entries, and — the spec's "the limit
 * follows the whole chain" — the same per-key execute limit of 60 a minute.
 */
import { Actions } from "@agent-platform/domain"
import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { ActionRunner, type Author, type Caller } from "../Actions/ActionRunner.ts"
import { isUuid } from "../Platform/Ids.ts"
import { RateLimits } from "../Platform/RateLimits.ts"
import { type ChatAction, ChatActions } from "./ChatActions.ts"

const decodeParameters = Schema.decodeUnknownSync(Schema.Array(Actions.ActionParameter))

export const ChatActionsLive = Layer.effect(
  ChatActions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const runner = yield* ActionRunner
    const limits = yield* RateLimits
    return ChatActions.of({
      listForAgent: ({ tenantId, agentId }) =>
        !isUuid(agentId) ? Effect.succeed([]) : Effect.map(
          sql<{ id: string; name: string; description: string; parameters: unknown; hitl_mode: string }>`
            SELECT a.id, a.name, a.description, a.parameters, a.hitl_mode
            FROM agent_actions aa JOIN actions a ON a.id = aa.action_id JOIN agents g ON g.id = aa.agent_id
            WHERE g.tenant_id = ${tenantId} AND a.tenant_id = ${tenantId} AND g.id = ${agentId} AND a.is_active
            ORDER BY a.name`,
          (rows) =>
            rows.map((row): ChatAction => ({
              id: row.id,
              name: row.name,
              description: row.description,
              parameters: decodeParameters(row.parameters),
              requiresConfirmation: row.hitl_mode === "confirm"
            }))
        ),
      execute: (input) =>
        Effect.gen(function*() {
          const caller: Caller = input.caller._tag === "Key"
            ? { kind: "key", keyId: input.caller.keyId, spaceId: input.caller.spaceId }
            : { kind: "user", userId: input.caller.userId }
          // The person (or, over an API key, the widget's visitor) whose message the agent acts on.
          const author: Author = input.caller._tag === "Key"
            ? { type: "key", keyId: input.caller.keyId }
            : { type: "user", userId: input.caller.userId }
          if (input.caller._tag === "Key") {
            const limit = yield* limits.consume({
              keyId: input.caller.keyId,
              keyRpm: input.caller.rateLimitRpm,
              limitClass: "execute"
            })
            if (!limit.allowed) {
              return yield* new Actions.ActionFailed({
                success: false,
                status_code: 429,
                action_id: input.actionId,
                action_name: "",
                response:
                  `Rate limit of ${limit.limit} action executions per minute exceeded; retry in ${limit.resetSeconds} s.`,
                error: "rate limit exceeded"
              })
            }
          }
          return yield* runner.execute({
            tenantId: input.tenantId,
            caller,
            actionId: input.actionId,
            params: input.params,
            trigger: { type: "agent", agentId: input.agentId, channel: input.channel ?? "chat", onBehalfOf: author },
            chatId: input.chatId,
            confirmation: input.confirmation === undefined ? undefined : {
              by: author,
              text: input.confirmation.text,
              asked: input.confirmation.asked,
              at: new Date()
            }
          })
        })
    })
  })
)
