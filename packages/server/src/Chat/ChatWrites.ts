/**
 * Write-behind for a chat's rows: a turn announces its chat (the first SSE
 * event) before the chat and the user's message are stored, and waits for
 * them before its first text event. The writes run in this
 * service's scope, so a client that goes away right after the first event
 * still has its message stored; a chat's writes run one after another, in
 * the order they were started.
 *
 * Reads of a chat on this replica (continuing it, its history) wait for its
 * writes first, so a client always reads what it was told was there.
 */
import { Context, Effect, Fiber, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"

export class ChatWrites extends Context.Service<ChatWrites, {
  /**
   * Starts `write` after the chat's earlier writes; it runs to the end
   * whether or not anyone waits. Returns the effect that waits for its result.
   */
  readonly behind: <A>(
    chatId: string,
    write: Effect.Effect<A, SqlError>
  ) => Effect.Effect<Effect.Effect<A, SqlError>>
  /** Waits until the writes started so far for the chat are done, stored or failed. */
  readonly settled: (chatId: string) => Effect.Effect<void>
}>()("@agent-platform/server/Chat/ChatWrites") {
  static readonly layer = Layer.effect(
    ChatWrites,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      /** The last write started per chat, while it runs. */
      const tails = new Map<string, Fiber.Fiber<unknown, unknown>>()

      const settled = (chatId: string) =>
        Effect.suspend(() => {
          const tail = tails.get(chatId)
          return tail === undefined ? Effect.void : Effect.asVoid(Fiber.await(tail))
        })

      const behind = <A>(chatId: string, write: Effect.Effect<A, SqlError>) =>
        Effect.gen(function*() {
          const previous = tails.get(chatId)
          const after = previous === undefined ? write : Effect.andThen(Fiber.await(previous), write)
          const fiber = yield* Effect.forkIn(after, scope)
          tails.set(chatId, fiber)
          fiber.addObserver(() => {
            if (tails.get(chatId) === fiber) tails.delete(chatId)
          })
          return Fiber.join(fiber)
        })

      return ChatWrites.of({ behind, settled })
    })
  )
}
