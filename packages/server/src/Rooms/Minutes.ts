/**
 * The minutes of a room, written when it closes by its always-on agents: the
 * summary agent (seeded `Summary`, or an always-on agent without a minutes
 * role) writes a summary; the decisions agent (`Decisions`) lists the
 * decisions and their owners. With a hosted model each part is the model's
 * answer to the agent's instructions over the transcript; with the embedded
 * model — or when the hosted one fails — they are extracted
 * (ExtractiveMinutes.ts), so a close always has minutes.
 */
import type { Rooms as RoomSchemas } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as LanguageModel from "effect/ai/LanguageModel"
import { embeddedLanguageModelName, ModelNames } from "../Ai/ModelNames.ts"
import { decisionsText, type ExtractedMinutes, extractMinutes, type TranscriptEntry } from "./ExtractiveMinutes.ts"
import type { RoomAgentRow } from "./RoomsRepo.ts"

export interface MinutesInput {
  readonly transcript: ReadonlyArray<TranscriptEntry>
  /** The names of everyone taking part, to recognize owners. */
  readonly participants: ReadonlyArray<string>
  readonly agents: ReadonlyArray<RoomAgentRow>
}

export interface WrittenMinutes {
  readonly minutes: RoomSchemas.Minutes
  /** What each author appends to the chat. */
  readonly messages: ReadonlyArray<{ readonly agentId: string; readonly content: string }>
}

/** Who writes which part: the agents with that minutes role, else (summary) the first other always-on agent. */
export const authorsOf = (agents: ReadonlyArray<RoomAgentRow>) => {
  const alwaysOn = agents.filter((agent) => agent.always_on)
  const summary = alwaysOn.find((agent) => agent.minutes_role === "summary") ??
    alwaysOn.find((agent) => agent.minutes_role === null)
  const decisions = alwaysOn.find((agent) => agent.minutes_role === "decisions")
  return { summary, decisions }
}

const transcriptText = (transcript: ReadonlyArray<TranscriptEntry>) =>
  transcript.map((entry) => `${entry.author}: ${entry.content}`).join("\n")

const decisionLine = /^\s*[-*•]\s*(.+?)\s*(?:\((?:owner|owners?)\s*:\s*([^)]+)\))?\s*$/iu

export class Minutes extends Context.Service<Minutes, {
  readonly write: (input: MinutesInput) => Effect.Effect<WrittenMinutes>
}>()("@agent-platform/server/Rooms/Minutes") {
  static readonly layer = Layer.effect(
    Minutes,
    Effect.gen(function*() {
      const names = yield* ModelNames
      const model = yield* LanguageModel.LanguageModel
      const embedded = names.languageModel === embeddedLanguageModelName

      const ask = (agent: RoomAgentRow | undefined, task: string, transcript: string) =>
        Effect.map(
          model.generateText({
            prompt: [
              { role: "system", content: `${agent?.instructions ?? "You take the minutes of a meeting."}\n\n${task}` },
              { role: "user", content: `The conversation:\n\n${transcript}` }
            ]
          }),
          (response) => response.text.trim()
        )

      /** The hosted model's minutes; fails when it does, or answers nothing usable. */
      const hosted = (input: MinutesInput, authors: ReturnType<typeof authorsOf>) =>
        Effect.gen(function*() {
          const text = transcriptText(input.transcript)
          const summary = yield* ask(
            authors.summary,
            "Summarize the conversation in a short paragraph: what happened, what was found, what is still open.",
            text
          )
          const listed = yield* ask(
            authors.decisions,
            "List every decision taken in the conversation, one per line, as `- <decision> (owner: <name>)`; leave out the owner when nobody was named. Answer `none` when there were no decisions.",
            text
          )
          if (summary.length === 0) return yield* Effect.fail("empty summary")
          const decisions = listed.split("\n").flatMap((line) => {
            const match = decisionLine.exec(line)
            return match === null ? [] : [{ decision: match[1], owner: match[2]?.trim() ?? null }]
          })
          return { summary, decisions } satisfies ExtractedMinutes
        })

      const write = (input: MinutesInput) =>
        Effect.gen(function*() {
          const authors = authorsOf(input.agents)
          const extracted = () => ({
            parts: extractMinutes(input.transcript, input.participants),
            model: names.languageModel
          })
          const { parts, model: modelName } = embedded || input.transcript.length === 0
            ? extracted()
            : yield* hosted(input, authors).pipe(
              Effect.map((parts) => ({ parts, model: names.languageModel })),
              Effect.catchCause((cause) =>
                Effect.as(
                  Effect.logWarning("the language model could not write the minutes; extracting them", cause),
                  {
                    parts: extractMinutes(input.transcript, input.participants),
                    model: `${embeddedLanguageModelName} (fallback)`
                  }
                )
              )
            )
          const minutes: RoomSchemas.Minutes = {
            summary: parts.summary,
            decisions: parts.decisions,
            authors: [
              ...(authors.summary === undefined
                ? []
                : [{ agent_id: authors.summary.id, name: authors.summary.name, part: "summary" as const }]),
              ...(authors.decisions === undefined
                ? []
                : [{ agent_id: authors.decisions.id, name: authors.decisions.name, part: "decisions" as const }])
            ],
            model: modelName,
            message_count: input.transcript.length,
            produced_at: new Date().toISOString()
          }
          const messages = [
            ...(authors.summary === undefined
              ? []
              : [{ agentId: authors.summary.id, content: `Summary: ${parts.summary}` }]),
            ...(authors.decisions === undefined
              ? []
              : [{ agentId: authors.decisions.id, content: decisionsText(parts.decisions) }])
          ]
          return { minutes, messages }
        })

      return Minutes.of({ write })
    })
  )
}
