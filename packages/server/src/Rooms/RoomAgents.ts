/**
 * Agents that take part: an agent participant answers a person's message
 * that mentions it (`@Name`, as the chat router reads mentions) through the
 * same chat engine as POST /v1/chat/completions — knowledge, actions, slot
 * filling, confirmations — and its reply is appended as an agent message.
 * The person who mentioned it is the caller of its actions, which run as
 * `human_triggered_auto` (`human_confirmed` after a confirmation), with the
 * room's chat id. When the agent ends its turn asking that person something
 * (a missing parameter, a confirmation), their next message answers it
 * without a new mention. Only theirs: another participant's message — even
 * one that mentions the agent and says "yes" — is an ordinary message to the
 * agent, and the question keeps waiting for the person who asked
 * (Chat/ChatTurn.ts).
 *
 * Turns run in the background, one at a time per room on this replica, and
 * stop with the service.
 */
import type { UserPrincipal } from "@agent-platform/domain"
import { Context, Deferred, Effect, FiberSet, Layer } from "effect"
import { identifierWords } from "../Ai/Words.ts"
import { ChatEngine } from "../Chat/ChatEngine.ts"
import { ChatRepo } from "../Chat/ChatRepo.ts"
import { mentionedAgent } from "../Chat/Router.ts"
import { RoomFeeds } from "./RoomFeeds.ts"
import { type RoomAgentRow, type RoomRow, RoomsRepo } from "./RoomsRepo.ts"

/** The agents a message calls: those it mentions, in the order of the room, else the agent waiting for its author. */
export const calledAgents = (
  room: Pick<RoomRow, "awaiting_agent_id" | "awaiting_user_id">,
  agents: ReadonlyArray<RoomAgentRow>,
  authorId: string,
  content: string
): ReadonlyArray<RoomAgentRow> => {
  const mentioned = agents.filter((agent) => mentionedAgent(content, [agent]) !== undefined)
  if (mentioned.length > 0) return mentioned
  const waiting = room.awaiting_user_id === authorId
    ? agents.find((agent) => agent.id === room.awaiting_agent_id)
    : undefined
  return waiting === undefined ? [] : [waiting]
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The message as the called agent reads it: a leading `@Name` only addresses
 * it ("@Support hello" asks "hello"); a mention inside the text stays.
 */
export const addressedText = (content: string, agent: { readonly name: string }): string => {
  const words = identifierWords(agent.name)
  if (words.length === 0) return content
  const handle = new RegExp(`^\\s*@${words.map(escape).join("[\\s_-]*")}(?![\\p{L}\\p{N}])[\\s,:;.!-]*`, "iu")
  const rest = content.replace(handle, "")
  return rest.trim().length === 0 ? content : rest
}

export class RoomAgents extends Context.Service<RoomAgents, {
  /** Starts the turns of the agents a person's stored message calls; returns at once. */
  readonly answer: (input: {
    readonly caller: UserPrincipal
    readonly room: RoomRow
    readonly content: string
    readonly seq: number
  }) => Effect.Effect<void>
}>()("@agent-platform/server/Rooms/RoomAgents") {
  static readonly layer = Layer.effect(
    RoomAgents,
    Effect.gen(function*() {
      const engine = yield* ChatEngine
      const chats = yield* ChatRepo
      const repo = yield* RoomsRepo
      const feeds = yield* RoomFeeds
      const running = yield* FiberSet.make()
      const tails = new Map<string, Deferred.Deferred<void>>()

      /** Runs `effect` after the turns already queued for `key` on this replica. */
      const inTurn = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function*() {
          const previous = tails.get(key)
          const mine = yield* Deferred.make<void>()
          tails.set(key, mine)
          if (previous !== undefined) yield* Deferred.await(previous)
          return yield* effect.pipe(
            Effect.ensuring(Effect.suspend(() => {
              if (tails.get(key) === mine) tails.delete(key)
              return Deferred.succeed(mine, undefined)
            }))
          )
        })

      const turn = (caller: UserPrincipal, room: RoomRow, agent: RoomAgentRow, content: string, seq: number) =>
        Effect.gen(function*() {
          const started = yield* engine.send({
            caller,
            chatId: room.chat_id,
            message: addressedText(content, agent),
            agentId: agent.id,
            storedMessageSeq: seq,
            channel: "room"
          })
          // The engine stores the agent's message when the turn ends.
          yield* started.run(() => Effect.void)
          const pending = yield* chats.pendingAction(caller.tenantId, room.chat_id)
          if (pending !== undefined) {
            // The agent and the person its question was put to: another participant's turn leaves them waiting.
            yield* repo.setAwaiting(room.id, pending.agent_id, pending.asked_user_id ?? caller.userId)
          } else {
            yield* repo.setAwaiting(room.id, null, null)
          }
          yield* feeds.signal(room.chat_id, "message")
        }).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning(`agent ${agent.name} could not answer in room ${room.id}`, cause)
          ),
          Effect.annotateLogs({ room_id: room.id, agent_id: agent.id })
        )

      return RoomAgents.of({
        answer: (input) =>
          Effect.gen(function*() {
            const agents = yield* repo.agents(input.room.id)
            const called = calledAgents(input.room, agents, input.caller.userId, input.content)
            if (called.length === 0) return
            yield* FiberSet.run(
              running,
              inTurn(
                input.room.chat_id,
                Effect.forEach(called, (agent) => turn(input.caller, input.room, agent, input.content, input.seq), {
                  discard: true
                })
              )
            )
          }).pipe(Effect.catchCause((cause) => Effect.logWarning("could not start the agents' turns", cause)))
      })
    })
  )
}
