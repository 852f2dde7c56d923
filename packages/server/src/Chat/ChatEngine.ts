/**
 * A chat turn (spec: POST /v1/chat/completions, "Events"): resolve the chat
 * or start one, pick the agent — all before the stream starts, so a bad chat
 * id or space is a plain 404 — then stream the agent's answer as domain
 * `ChatEvent`s: `agent_info` first, text tokens in
 * order, a `system_alert` and an `action_result` card per action run, a
 * `parameter_form` when an action lacks parameters, and an `error` event if
 * the turn fails after it started. The turn itself never fails.
 *
 * The turn announces its agent and chat before the new chat and the user's
 * message are stored (ChatWrites.ts: write-behind, batched with concurrent
 * chats by ChatRepo), and waits for them before its next event. The writes
 * start once the chats being opened around this one are announced
 * (TurnAdmission `settled`): a burst of chats gets its first events without
 * queueing behind each other's inserts — on the embedded database they run on
 * the same event loop —, and the message is stored even if the client goes away.
 *
 * The agent's message is stored when the turn ends however it ends —
 * completed, failed, or interrupted because the client went away — with the
 * text produced so far and the turn's token usage (the model's own counts;
 * estimated with the embedded tokenizer for a round cut short or a provider
 * that reports none). What the turn does — knowledge, actions, slot filling —
 * is ChatTurn.ts.
 */
import { type Chat, Errors, type Principal } from "@agent-platform/domain"
import { Cause, Context, Effect, Layer, Queue, Stream } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { isUuid } from "../Platform/Ids.ts"
import { type AgentRow, ChatRepo, type ChatRow, type PendingActionRow, type SeedMessage } from "./ChatRepo.ts"
import { describeFailure, makeMeter, makeTurnRunner, type TurnContext } from "./ChatTurn.ts"
import { ChatWrites } from "./ChatWrites.ts"
import { mentionedAgent, primaryRoute, Router } from "./Router.ts"
import * as SlotFilling from "./SlotFilling.ts"
import type { Opening } from "./TurnAdmission.ts"

export interface SendInput {
  /** Who is chatting; the tenant, a key's space binding, the key or user recorded on the chat come from here. */
  readonly caller: Principal
  /**
   * A space code or id; omitted: the key's space, else the tenant's first
   * space. With `chatId`, the chat's own space, or omitted.
   */
  readonly space?: string | undefined
  /** Continue this chat; null or omitted starts one. */
  readonly chatId?: string | null | undefined
  readonly message: string
  /** Seeds the context of a new chat (ignored when continuing one). */
  readonly history?: ReadonlyArray<typeof Chat.HistoryItem.Type> | undefined
  /** Answer with this agent of the chat's space (a room's mentioned participant) instead of routing. */
  readonly agentId?: string | undefined
  /** The user's message is already stored with this `seq` (a room append): the turn answers it. */
  readonly storedMessageSeq?: number | undefined
  /**
   * A classic chat, or a room's chat (an agent answering the caller's mention);
   * provenance records which. Default `chat`.
   */
  readonly channel?: "chat" | "room" | undefined
}

/** What a turn hands each event to; the turn's next event waits for it. */
export type Emit = (event: Chat.ChatEvent) => Effect.Effect<void>

export interface ChatTurn {
  readonly chatId: string
  readonly agentId: string
  readonly agentName: string
  /**
   * Runs the turn (once), handing each event to `emit` as it is produced, and
   * stores the agent's message when it ends however it ends: what `emit` took
   * is what is stored. Never fails. The SSE response runs it with an `emit`
   * that frames the event into the response's buffer (ChatHttp.ts).
   */
  readonly run: (emit: Emit) => Effect.Effect<void>
  /** {@link run} as a stream, in lockstep with its consumer: runs the turn when consumed (once). Never fails. */
  readonly events: Stream.Stream<Chat.ChatEvent>
}

export class ChatEngine extends Context.Service<ChatEngine, {
  /**
   * Starts a turn: 404 (`NotFound`) for an unknown or other tenant's chat, an
   * unknown space, a space outside the key's binding, or a space without
   * agents; 400 (`InvalidRequest`) for a chat continued in a space named that
   * is not its own. The user's message is being stored when this returns
   * (ChatWrites); the turn's events wait for it after `agent_info`.
   */
  readonly send: (input: SendInput) => Effect.Effect<ChatTurn, Errors.NotFound | Errors.InvalidRequest | SqlError>
}>()("@agent-platform/server/Chat/ChatEngine") {
  /** Needs ChatRepo, ChatWrites, Router, Retrieval, ChatActions and LanguageModel. */
  static readonly layer = Layer.effect(
    ChatEngine,
    Effect.gen(function*() {
      const repo = yield* ChatRepo
      const writes = yield* ChatWrites
      const router = yield* Router
      const runner = yield* makeTurnRunner

      const notFound = (error: string) => new Errors.NotFound({ error })

      const resolveSpace = Effect.fnUntraced(
        function*(tenantId: string, bound: string | null, ref: string | undefined) {
          if (ref !== undefined) {
            const space = yield* repo.findSpace(tenantId, ref)
            // A space-bound key sees only its space: any other looks missing.
            if (space === undefined || (bound !== null && space.id !== bound)) {
              return yield* notFound(`space ${ref} not found`)
            }
            return space.id
          }
          if (bound !== null) return bound
          const first = yield* repo.firstSpace(tenantId)
          if (first === undefined) return yield* notFound("the tenant has no space to chat in")
          return first.id
        }
      )

      const send = Effect.fn("ChatEngine.send")(function*(input: SendInput) {
        // From here to the first event, turns already working yield to this one (TurnAdmission).
        const opening = yield* runner.opening
        return yield* Effect.onError(open(input, opening), () => opening.announced)
      })

      const open = Effect.fnUntraced(function*(input: SendInput, opening: Opening) {
        const caller = input.caller
        const tenantId = caller.tenantId
        const bound = boundSpace(caller)
        const chatId = input.chatId ?? null

        let chat: ChatRow | undefined
        let spaceId: string
        if (chatId !== null) {
          chat = isUuid(chatId)
            ? yield* Effect.andThen(writes.settled(chatId), repo.findChat(tenantId, chatId))
            : undefined
          if (chat === undefined || (bound !== null && chat.space_id !== bound)) {
            return yield* notFound(`chat ${chatId} not found`)
          }
          // A room's chat takes people's messages through the room (participants, open rooms only).
          if (chat.room_mode === true && input.storedMessageSeq === undefined) {
            return yield* notFound(
              `chat ${chatId} is a work room's chat: append to it with POST /api/chats/${chatId}/messages/append`
            )
          }
          spaceId = chat.space_id
          // A chat stays in its space: naming another is a mistake to say, not to carry on past.
          if (input.space !== undefined && (yield* resolveSpace(tenantId, bound, input.space)) !== spaceId) {
            return yield* new Errors.InvalidRequest({
              error:
                `chat ${chatId} is in another space than ${input.space}: leave out space to continue it, or chat_id to start a chat in ${input.space}`
            })
          }
        } else {
          spaceId = yield* resolveSpace(tenantId, bound, input.space)
        }
        const agents = yield* repo.listAgents(tenantId, spaceId)
        if (agents.length === 0) return yield* notFound("the space has no agents")

        const stored = chat === undefined ? undefined : yield* repo.pendingAction(tenantId, chat.id)
        // Only the one the agent asked answers its question; anyone else's message is an ordinary one,
        // and the question stays where it is (SlotFilling `answers`).
        const own = stored !== undefined && SlotFilling.answers(stored, caller) ? stored : undefined
        const othersPending = stored !== undefined && own === undefined ? stored : undefined
        // A turn asked of one agent leaves another agent's action in preparation alone.
        const pending = input.agentId === undefined || own?.agent_id === input.agentId ? own : undefined
        const requested = input.agentId === undefined ? undefined : agents.find((agent) => agent.id === input.agentId)
        if (input.agentId !== undefined && requested === undefined) {
          return yield* notFound(`agent ${input.agentId} not found`)
        }
        const agent = requested ?? (yield* chooseAgent(tenantId, agents, chat, pending, input.message))
        const userId = caller._tag === "User" ? caller.userId : null
        // Everything that can refuse the turn is decided: its writes go behind, the stream starts now.
        let userMessage: Effect.Effect<number, SqlError>
        if (chat === undefined) {
          const seedHistory = (input.history ?? []).map((item): SeedMessage => ({
            role: item.role === "user" ? "user" : "agent",
            content: item.content
          }))
          chat = {
            id: crypto.randomUUID(),
            tenant_id: tenantId,
            space_id: spaceId,
            agent_id: agent.id,
            seed_history: seedHistory,
            room_mode: false
          }
          const stored = yield* writes.behind(
            chat.id,
            Effect.andThen(
              opening.settled,
              repo.startChat({
                id: chat.id,
                tenantId,
                spaceId,
                agentId: agent.id,
                keyId: caller._tag === "Key" ? caller.keyId : null,
                userId,
                seedHistory,
                message: input.message
              })
            )
          )
          userMessage = Effect.as(stored, 1)
        } else {
          const chatRow = chat
          const reassign = chatRow.agent_id === agent.id
            ? Effect.void
            : repo.setChatAgent(tenantId, chatRow.id, agent.id)
          const append = input.storedMessageSeq !== undefined
            ? Effect.succeed(input.storedMessageSeq)
            : Effect.map(
              repo.appendMessage({
                tenantId,
                chatId: chatRow.id,
                role: "user",
                content: input.message,
                agentId: null,
                userId,
                tokensInput: 0,
                tokensOutput: 0
              }),
              (row) => row.seq
            )
          userMessage = yield* writes.behind(
            chatRow.id,
            opening.settled.pipe(Effect.andThen(reassign), Effect.andThen(append))
          )
        }
        const turn: TurnContext = {
          tenantId,
          caller,
          chat,
          agent,
          pending,
          othersPending,
          message: input.message,
          userMessage,
          opening,
          channel: input.channel
        }
        const run = runTurn(turn)
        return {
          chatId: chat.id,
          agentId: agent.id,
          agentName: agent.name,
          run,
          // Built when asked for: the SSE response runs the turn itself.
          get events() {
            return turnEvents(run)
          }
        } satisfies ChatTurn
      })

      /**
       * A continuing chat keeps its agent — or the agent of the action it is
       * preparing — unless the message names another; a new chat is routed.
       */
      const chooseAgent = (
        tenantId: string,
        agents: ReadonlyArray<AgentRow>,
        chat: ChatRow | undefined,
        pending: PendingActionRow | undefined,
        message: string
      ) =>
        Effect.gen(function*() {
          const byId = (id: string | null | undefined) => agents.find((agent) => agent.id === id)
          if (chat !== undefined) {
            const preparing = byId(pending?.agent_id)
            if (preparing !== undefined) return preparing
            const current = mentionedAgent(message, agents) ?? byId(chat.agent_id)
            if (current !== undefined) return current
          }
          const route = yield* router.route({ tenantId, agents, message }).pipe(
            // Matching needs the embedding model; when it fails, the primary agent still answers.
            Effect.catchTag("AiError", (error) =>
              Effect.as(
                Effect.logWarning("routing by match failed; using the primary agent", error),
                primaryRoute(agents)
              ))
          )
          return route.agent
        })

      /** Runs the turn, handing its events to `emit`, and stores the agent's message when it ends. */
      const runTurn = (turn: TurnContext) => (emit: Emit): Effect.Effect<void> => {
        const meter = makeMeter()
        let delivered = ""
        const persist = Effect.suspend(() => {
          const usage = meter.totals()
          if (delivered.length === 0) return Effect.void
          // After the chat's other writes; `[DONE]` waits for it.
          return Effect.flatten(writes.behind(
            turn.chat.id,
            repo.appendMessage({
              tenantId: turn.tenantId,
              chatId: turn.chat.id,
              role: "agent",
              content: delivered,
              agentId: turn.agent.id,
              tokensInput: usage.input,
              tokensOutput: usage.output
            })
          ))
        }).pipe(
          Effect.catchCause((cause) => Effect.logError("could not store the agent's message", cause)),
          Effect.asVoid
        )
        // What `emit` took is what was said: a text event counts once it is handed over.
        const handOver = (event: Chat.ChatEvent) =>
          "text" in event
            ? Effect.andThen(emit(event), Effect.sync(() => (delivered += event.text)))
            : emit(event)
        return runner.run(turn, meter, handOver).pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.interrupt
              : Effect.logWarning("chat turn failed", cause).pipe(
                Effect.andThen(emit({ type: "error", error: describeFailure(cause) }))
              )
          ),
          Effect.ensuring(Effect.andThen(turn.opening.announced, persist))
        )
      }

      /** A turn's {@link runTurn} as a stream in lockstep with its consumer: what is stored is what was taken. */
      const turnEvents = (run: (emit: Emit) => Effect.Effect<void>): Stream.Stream<Chat.ChatEvent> =>
        Stream.callback<Chat.ChatEvent>(
          (queue) => run((event) => Effect.asVoid(Queue.offer(queue, event))).pipe(Effect.ensuring(Queue.end(queue))),
          { bufferSize: 1, strategy: "suspend" }
        )

      return ChatEngine.of({ send })
    })
  )
}
