/**
 * The actions an agent can run from a chat, as the chat engine needs them:
 * which ones an agent has, and running one. The engine decides when (a
 * request recognized, its parameters collected, the user's confirmation for
 * an action that `requires_confirmation`); this service does the running, so
 * chat executions share direct execution's path (issue #4: limits, the
 * `action_executions` record, webhooks, audit) — back it with the
 * ActionRunner; tests back it with a local HTTP server.
 */
import { Context, type Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type { Actions, Errors, Principal } from "@agent-platform/domain"

/** An active catalog action assigned to the agent. */
export interface ChatAction {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly parameters: ReadonlyArray<Actions.ActionParameter>
  readonly requiresConfirmation: boolean
}

export interface ChatActionExecution {
  /** The caller's tenant (from the principal). */
  readonly tenantId: string
  /** Who is chatting: an API key (maybe bound to a space) or a signed-in user. */
  readonly caller: Principal
  readonly agentId: string
  readonly chatId: string
  readonly actionId: string
  readonly params: Record<string, unknown>
  /** `human_confirmed` when the user confirmed in chat an action that requires it; else `autonomous`. */
  readonly supervision: "autonomous" | "human_confirmed"
  /** The user's confirmation, verbatim, and the human-in-the-loop configuration it answered. */
  readonly confirmation?: { readonly text: string; readonly snapshot: unknown } | undefined
}

export class ChatActions extends Context.Service<ChatActions, {
  /** The agent's active actions (tenant-filtered); empty for an unknown agent. */
  readonly listForAgent: (input: {
    readonly tenantId: string
    readonly agentId: string
  }) => Effect.Effect<ReadonlyArray<ChatAction>, SqlError>
  /**
   * Runs the action. A remote failure is `ActionFailed` (an ActionResponse with
   * success false), as in direct execution; the engine shows every outcome to
   * the user as a system alert and a result card.
   */
  readonly execute: (
    input: ChatActionExecution
  ) => Effect.Effect<Actions.ActionResponse, Errors.NotFound | Errors.InvalidRequest | Actions.ActionFailed>
}>()("@agent-platform/server/Chat/ChatActions") {}
