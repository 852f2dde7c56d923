/**
 * A chat's history (spec: GET /v1/chat/history/{chatId}): its messages in
 * order, `agent_id` on the agent's. 404 for an unknown chat, another
 * tenant's, a work room's (those belong to the session surface /api/rooms*,
 * /api/chats/{id}) or — for a space-bound key — a chat of another space.
 */
import { type Chat, Errors, type Principal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { isUuid } from "../Platform/Ids.ts"
import { ChatRepo } from "./ChatRepo.ts"
import { ChatWrites } from "./ChatWrites.ts"

export class ChatHistory extends Context.Service<ChatHistory, {
  readonly read: (
    input: { readonly caller: Principal; readonly chatId: string }
  ) => Effect.Effect<typeof Chat.ChatHistory.Type, Errors.NotFound | SqlError>
}>()("@agent-platform/server/Chat/ChatHistory") {
  static readonly layer = Layer.effect(
    ChatHistory,
    Effect.gen(function*() {
      const repo = yield* ChatRepo
      const writes = yield* ChatWrites
      const read = Effect.fn("ChatHistory.read")(
        function*(input: { readonly caller: Principal; readonly chatId: string }) {
          const tenantId = input.caller.tenantId
          const bound = boundSpace(input.caller)
          // What this replica is still storing of the chat (ChatWrites) is read once stored.
          const chat = isUuid(input.chatId)
            ? yield* Effect.andThen(writes.settled(input.chatId), repo.findChat(tenantId, input.chatId))
            : undefined
          if (chat === undefined || chat.room_mode === true || (bound !== null && chat.space_id !== bound)) {
            return yield* new Errors.NotFound({ error: `chat ${input.chatId} not found` })
          }
          const rows = yield* repo.messages(tenantId, chat.id)
          return {
            chat_id: chat.id,
            messages: rows.map((row): typeof Chat.ChatMessage.Type => ({
              id: row.id,
              role: row.role,
              content: row.content,
              created_at: row.created_at.toISOString(),
              ...(row.role === "agent" && row.agent_id !== null ? { agent_id: row.agent_id } : {})
            }))
          }
        }
      )
      return ChatHistory.of({ read })
    })
  )
}
