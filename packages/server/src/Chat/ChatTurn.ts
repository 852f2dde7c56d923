/**
 * The work of one chat turn, once the chat and the agent are known: answer
 * from the agent's knowledge, or carry an action through the slot-filling
 * conversation (ask for a missing parameter, ask for confirmation, run it and
 * let the model report the result). Events go to the caller's `emit`; the
 * token usage of every model call to the `UsageMeter`.
 *
 * A question about an action is answered only by the one it was put to (the
 * user or API key whose turn asked it): in a room, another participant's
 * message — even "@Agent yes" — is an ordinary message to the agent. It
 * neither confirms, fills nor cancels the action, which stays in place for
 * its asker; and an action that message would start preparing is declined
 * until that question is settled (one action in preparation per chat).
 */
import type { Actions, Chat, Principal } from "@agent-platform/domain"
import { Cause, Effect, Option, Stream } from "effect"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import type { SqlError } from "effect/sql/SqlError"
import { providerConfig } from "../Ai/Models.ts"
import { confirmationOf, extractParameters, isCancellation } from "../Ai/ParameterExtraction.ts"
import { countPromptTokens, countTokens } from "../Ai/TokenCount.ts"
import { Retrieval } from "../Knowledge/Retrieval.ts"
import { ServerConfig } from "../Platform/Config.ts"
import { type ChatAction, ChatActions } from "./ChatActions.ts"
import * as ChatPrompt from "./ChatPrompt.ts"
import { type AgentRow, ChatRepo, type ChatRow, type PendingActionRow } from "./ChatRepo.ts"
import * as SlotFilling from "./SlotFilling.ts"
import { makeTurnAdmission, type Opening } from "./TurnAdmission.ts"

/** Knowledge excerpts given to the model per turn. */
const excerptsPerTurn = 4
/** Stored messages given to the model as context. */
const contextMessages = 20
/** Turns working at once with the embedded model (CPU-bound, on the event loop)... */
const embeddedTurnConcurrency = 4
/** ...and with a provider's (mostly waiting on the network). */
const hostedTurnConcurrency = 256
/** Model calls per turn (a call, its tool results, a follow-up...). */
const maxRounds = 3

/** What a user sees when the turn fails after the stream started. */
export const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (AiError.isAiError(error)) {
    switch (error.reason._tag) {
      case "RateLimitError":
        return "The language model is rate limited right now; try again in a moment."
      case "AuthenticationError":
        return "The language model provider rejected the platform's credentials."
      case "NetworkError":
        return "The language model provider could not be reached."
      default:
        return `The language model failed: ${error.reason.message}`
    }
  }
  return "The agent could not finish its answer because of an internal error."
}

/**
 * Token usage of a turn across its model calls. A call's prompt is counted
 * only when the model reports no usage for it (a provider that does not, a
 * call cut short): the embedded model always does.
 */
export const makeMeter = () => {
  let input = 0
  let output = 0
  let open: { prompt: Prompt.RawInput; text: string } | undefined
  const promptTokens = (prompt: Prompt.RawInput) => countPromptTokens(Prompt.make(prompt))
  return {
    start: (prompt: Prompt.RawInput) => {
      open = { prompt, text: "" }
    },
    text: (delta: string) => {
      if (open !== undefined) open.text += delta
    },
    finish: (
      usage: {
        readonly inputTokens: { readonly total?: number | undefined }
        readonly outputTokens: { readonly total?: number | undefined }
      }
    ) => {
      if (open === undefined) return
      input += usage.inputTokens.total ?? promptTokens(open.prompt)
      output += usage.outputTokens.total ?? countTokens(open.text)
      open = undefined
    },
    /** The totals, counting a call cut short by its prompt and the text it produced. */
    totals: () => ({
      input: input + (open === undefined ? 0 : promptTokens(open.prompt)),
      output: output + (open === undefined ? 0 : countTokens(open.text))
    })
  }
}

export type UsageMeter = ReturnType<typeof makeMeter>

/** A turn, as ChatEngine.send resolved it before streaming. */
export interface TurnContext {
  readonly tenantId: string
  readonly caller: Principal
  readonly chat: ChatRow
  readonly agent: AgentRow
  /** The action in preparation this message answers: the caller's own (SlotFilling `answers`). */
  readonly pending: PendingActionRow | undefined
  /**
   * An action in preparation that waits for someone else's answer (a room):
   * this turn leaves it in place — it neither answers it nor replaces it.
   */
  readonly othersPending?: PendingActionRow | undefined
  readonly message: string
  /**
   * The `seq` of the user's message once it is stored (write-behind: the turn
   * waits for it after announcing its agent, before anything else).
   */
  readonly userMessage: Effect.Effect<number, SqlError>
  /** The chat's opening (TurnAdmission): ended once its first event is out; the turn's right to work. */
  readonly opening: Opening
  /** A classic chat, or a room's chat (provenance records which); default `chat`. */
  readonly channel?: "chat" | "room" | undefined
}

/** The turn runner over the chat's services (ChatRepo, Retrieval, ChatActions, LanguageModel). */
export const makeTurnRunner = Effect.gen(function*() {
  const repo = yield* ChatRepo
  const retrieval = yield* Retrieval
  const actions = yield* ChatActions
  const model = yield* LanguageModel.LanguageModel

  // The embedded model works on this process's one event loop: a few turns at a time; a provider's, many.
  const config = yield* Effect.serviceOption(ServerConfig)
  const hosted = Option.isSome(Option.flatMap(config, providerConfig))
  const admission = yield* makeTurnAdmission({
    concurrency: hosted ? hostedTurnConcurrency : embeddedTurnConcurrency,
    settle: "25 millis",
    maxDeferral: "1 second"
  })

  /** Runs the turn, offering its events to `emit`. */
  const run = (turn: TurnContext, meter: UsageMeter, emit: (event: Chat.ChatEvent) => Effect.Effect<void>) =>
    Effect.scoped(Effect.gen(function*() {
      let produced = ""
      const emitText = (text: string) => {
        produced += text
        return emit({ text })
      }
      /** Platform-authored text, word by word, after a blank line if the model already wrote something. */
      const say = (text: string) =>
        Effect.forEach(
          [...(produced.length > 0 && !/\s$/u.test(produced) ? ["\n\n"] : []), ...(text.match(/\S+\s*/gu) ?? [])],
          emitText,
          { discard: true }
        )

      yield* emit({ type: "agent_info", agent_id: turn.agent.id, agent_name: turn.agent.name, chat_id: turn.chat.id })
      yield* turn.opening.announced
      yield* turn.opening.work
      const userSeq = yield* turn.userMessage

      const agentActions = yield* actions.listForAgent({ tenantId: turn.tenantId, agentId: turn.agent.id })
      const tools = ChatPrompt.actionTools(agentActions)
      const conversation = yield* conversationBefore(turn, userSeq)

      /** One model call; its text streams out, its tool calls are returned. */
      const modelRound = (prompt: ReadonlyArray<Prompt.MessageEncoded>, last: boolean) =>
        Effect.gen(function*() {
          const calls: Array<{ readonly id: string; readonly name: string; readonly params: unknown }> = []
          let text = ""
          meter.start(prompt)
          // Tool calls are returned, never resolved by the toolkit: the toolkit needs no services.
          const parts: Stream.Stream<Response.StreamPart<Record<string, Tool.Any>>, AiError.AiError> =
            agentActions.length === 0
              ? model.streamText({ prompt })
              : model.streamText({
                prompt,
                toolkit: tools.toolkit,
                toolChoice: last ? "none" : "auto",
                disableToolCallResolution: true
              }) as Stream.Stream<Response.StreamPart<Record<string, Tool.Any>>, AiError.AiError>
          yield* Stream.runForEach(parts, (part) => {
            switch (part.type) {
              case "text-delta":
                text += part.delta
                meter.text(part.delta)
                return emitText(part.delta)
              case "tool-call":
                calls.push({ id: part.id, name: part.name, params: part.params })
                return Effect.void
              case "finish":
                meter.finish(part.usage)
                return Effect.void
              case "error":
                return Effect.fail(AiError.make({
                  module: "ChatEngine",
                  method: "modelRound",
                  reason: new AiError.UnknownError({ description: String(part.error) })
                }))
              default:
                return Effect.void
            }
          })
          return { text, calls }
        })

      /** Runs an action and shows its outcome; the response as ActionResponse either way. */
      const execute = (
        action: ChatAction,
        params: Record<string, unknown>,
        confirmation?: { text: string; asked: string }
      ) =>
        Effect.gen(function*() {
          const failed = (status: number, error: string): Actions.ActionResponse => ({
            success: false,
            status_code: status,
            action_id: action.id,
            action_name: action.name,
            response: error,
            error
          })
          const response = yield* actions.execute({
            tenantId: turn.tenantId,
            caller: turn.caller,
            agentId: turn.agent.id,
            chatId: turn.chat.id,
            actionId: action.id,
            params,
            channel: turn.channel,
            confirmation
          }).pipe(
            Effect.catchTags({
              ActionFailed: (error) =>
                Effect.succeed<Actions.ActionResponse>({
                  success: false,
                  status_code: error.status_code,
                  action_id: error.action_id,
                  action_name: error.action_name,
                  response: error.response,
                  error: error.error
                }),
              NotFound: (error) => Effect.succeed(failed(404, error.error)),
              InvalidRequest: (error) => Effect.succeed(failed(400, error.error))
            }),
            // Started is finished: a client going away must not cut an execution (and its record) in half.
            Effect.uninterruptible
          )
          yield* emit(SlotFilling.systemAlert(response))
          yield* emit(SlotFilling.actionResultCard(response))
          const shadow = SlotFilling.shadowNotice(response)
          if (shadow !== undefined) yield* say(shadow)
          return response
        })

      /**
       * Takes an action with the parameters known so far to its next step:
       * ask for a missing one, ask for confirmation, or run it. Returns the
       * response when it ran.
       */
      const advance = (action: ChatAction, params: Record<string, unknown>, rejected: string | undefined) =>
        Effect.gen(function*() {
          const next = SlotFilling.nextStep(action, params)
          // The chat holds one action in preparation: another person's question is not replaced.
          if (next._tag !== "Run" && turn.othersPending !== undefined) {
            yield* say(SlotFilling.waitingForAnother(action))
            return undefined
          }
          switch (next._tag) {
            case "Ask": {
              yield* repo.savePendingAction(turn.tenantId, {
                chat_id: turn.chat.id,
                agent_id: turn.agent.id,
                action_id: action.id,
                stage: "collecting",
                params,
                asking: next.parameter.name,
                ...SlotFilling.askedOf(turn.caller)
              })
              yield* emit(SlotFilling.parameterForm(action, params, next.missing))
              yield* say(SlotFilling.question(action, next.parameter, rejected))
              return undefined
            }
            case "Confirm": {
              yield* repo.savePendingAction(turn.tenantId, {
                chat_id: turn.chat.id,
                agent_id: turn.agent.id,
                action_id: action.id,
                stage: "confirming",
                params,
                asking: null,
                ...SlotFilling.askedOf(turn.caller)
              })
              yield* emit(SlotFilling.confirmationCard(action, params))
              yield* say(SlotFilling.confirmationRequest(action, params))
              return undefined
            }
            case "Run": {
              if (turn.othersPending === undefined) yield* repo.clearPendingAction(turn.tenantId, turn.chat.id)
              return yield* execute(action, params)
            }
          }
        })

      const base = (excerpts: ReadonlyArray<{ readonly filename: string; readonly content: string }> | undefined) =>
        ChatPrompt.messages(
          ChatPrompt.systemMessage(turn.agent, excerpts, agentActions.length > 0),
          conversation,
          turn.message
        )

      /** Lets the model report results of actions that ran without its tool call (slot filling). */
      const report = (action: ChatAction, params: Record<string, unknown>, response: Actions.ActionResponse) =>
        modelRound(
          [
            ...base(undefined),
            ...ChatPrompt.toolExchange("", [{
              id: `call_${crypto.randomUUID()}`,
              name: tools.toolNameOf(action.id),
              params,
              result: response,
              isFailure: !response.success
            }])
          ],
          true
        )

      // An action in preparation: this message answers its question or its confirmation.
      if (turn.pending !== undefined) {
        const pending = turn.pending
        const action = agentActions.find((a) => a.id === pending.action_id)
        if (action === undefined) {
          yield* repo.clearPendingAction(turn.tenantId, turn.chat.id)
          return yield* say(SlotFilling.unavailable)
        }
        if (pending.stage === "confirming") {
          const answer = confirmationOf(turn.message)
          if (answer === undefined) {
            yield* emit(SlotFilling.confirmationCard(action, pending.params))
            return yield* say(SlotFilling.stillWaiting(action))
          }
          yield* repo.clearPendingAction(turn.tenantId, turn.chat.id)
          if (answer === "no") return yield* say(SlotFilling.cancelled(action))
          const response = yield* execute(action, pending.params, {
            text: turn.message,
            asked: SlotFilling.confirmationRequest(action, pending.params)
          })
          return yield* report(action, pending.params, response)
        }
        if (isCancellation(turn.message)) {
          yield* repo.clearPendingAction(turn.tenantId, turn.chat.id)
          return yield* say(SlotFilling.cancelled(action))
        }
        const known = SlotFilling.acceptParams(action.parameters, pending.params).values
        const answered = extractParameters(turn.message, action.parameters, { asking: pending.asking ?? undefined })
        const rejected = pending.asking !== null && answered.invalid.includes(pending.asking)
          ? turn.message.trim()
          : undefined
        const params = { ...known, ...answered.values }
        const response = yield* advance(action, params, rejected)
        if (response !== undefined) yield* report(action, params, response)
        return
      }

      // A fresh request: the model answers from knowledge, or calls one of the agent's actions.
      const found = yield* retrieval.search({
        tenantId: turn.tenantId,
        agentIds: [turn.agent.id],
        query: turn.message,
        limit: excerptsPerTurn
      })
      let prompt: Array<Prompt.MessageEncoded> = base(
        found.map((chunk) => ({ filename: chunk.filename, content: chunk.content }))
      )
      for (let round = 1; round <= maxRounds; round++) {
        const { text, calls } = yield* modelRound(prompt, round === maxRounds)
        if (calls.length === 0) return
        const results: Array<{ id: string; name: string; params: unknown; result: unknown; isFailure: boolean }> = []
        for (const call of calls) {
          const action = tools.actionOf(call.name)
          if (action === undefined) continue
          const accepted = SlotFilling.acceptParams(action.parameters, call.params)
          const response = yield* advance(action, accepted.values, undefined)
          // Waiting for the user (a parameter, a confirmation): the turn ends with the question.
          if (response === undefined) return
          results.push({ ...call, result: response, isFailure: !response.success })
        }
        if (results.length === 0) return
        prompt = [...prompt, ...ChatPrompt.toolExchange(text, results)]
      }
    }))

  /** The conversation before the user's message: the chat's seed history, then its last stored messages. */
  const conversationBefore = (turn: TurnContext, userSeq: number) =>
    Effect.map(
      // The first message of a chat has nothing stored before it.
      userSeq <= 1 ? Effect.succeed([]) : repo.recentMessages(turn.tenantId, turn.chat.id, userSeq, contextMessages),
      (rows): Array<ChatPrompt.Turn> => [
        ...turn.chat.seed_history.map((item) => ({ role: item.role, content: item.content })),
        ...rows.map((row) => ({ role: row.role, content: row.content }))
      ]
    )

  return { run, opening: admission.opening }
})
