/**
 * The actions an agent can run from a chat, as the chat engine needs them:
 * which ones an agent has, and running one. The engine decides when (a
 * request recognized, its parameters collected, the user's confirmation for
 * an action in `confirm` mode); this service does the running, so
 * chat executions share direct execution's path (issue #4: limits, the
 * `action_executions` record, webhooks, audit) — back it with the
 * ActionRunner; tests back it with a local HTTP server.
 */
import type { Actions, Errors, Principal } from "@agent-platform/domain"
import { Context, type Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"

/** An active catalog action assigned to the agent. */
export interface ChatAction {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly parameters: ReadonlyArray<Actions.ActionParameter>
  /** Its human-in-the-loop mode is `confirm`: the chat asks for a "yes" first. */
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
  /** A classic chat, or a room's chat (an agent answering a mention); default `chat`. */
  readonly channel?: "chat" | "room" | undefined
  /**
   * The caller's confirmation in chat: their message verbatim and the request
   * it answered. The provenance of the execution — the agent triggered it on
   * the caller's message, who confirmed it, the supervision class — is
   * recorded from these by the ActionRunner.
   */
  readonly confirmation?: { readonly text: string; readonly asked: string } | undefined
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
