/**
 * The embedded language model ("embedded-extractive-v2"), used when no
 * provider is configured so a fresh install chats out of the box. It is not a
 * neural model and says so in `/health`: it reads the prompt the chat engine
 * builds and, deterministically,
 *
 * - after tool results, reports what the action did;
 * - when the last user message asks to run one of the offered tools, calls it
 *   with the parameters the message gives (the engine asks for the rest);
 * - otherwise answers with the sentences of the knowledge excerpts that cover
 *   the question, citing the file name, or says plainly that it does not know.
 *
 * Text streams word by word; usage counts the prompt's and the answer's tokens
 * with the embedded tokenizer.
 */
import { Effect, Layer, Stream } from "effect"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import * as Tool from "effect/ai/Tool"
import { recognizeAction } from "./ActionRecognition.ts"
import { answerFrom, nothingRelevant } from "./ExtractiveAnswer.ts"
import * as KnowledgeContext from "./KnowledgeContext.ts"
import { extractParameters, type ParameterSpec } from "./ParameterExtraction.ts"
import { countPromptTokens, countTokens } from "./TokenCount.ts"

export const modelId = "embedded-extractive-v2"

type Reply =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly name: string; readonly params: Record<string, unknown> }

const greeting = /^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|hola|greetings)\b[\s!.,]*$/iu

const lastUserText = (prompt: Prompt.Prompt): string => {
  for (let i = prompt.content.length - 1; i >= 0; i--) {
    const message = prompt.content[i]
    if (message.role === "user") {
      return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
    }
  }
  return ""
}

const systemText = (prompt: Prompt.Prompt): string =>
  prompt.content.flatMap((message) => (message.role === "system" ? [message.content] : [])).join("\n")

/** The parameters of a tool as the catalog declared them, read back from its JSON schema. */
const parameterSpecs = (tool: Tool.Any): Array<ParameterSpec> => {
  const schema = Tool.getJsonSchema(tool) as {
    readonly properties?: Record<string, { readonly type?: unknown; readonly description?: unknown }>
    readonly required?: ReadonlyArray<string>
  }
  const required = new Set(schema.required ?? [])
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    type: typeof property.type === "string" ? property.type : "string",
    description: typeof property.description === "string" ? property.description : "",
    required: required.has(name)
  }))
}

const describeValue = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

/** What an action's result says, in a sentence or two. */
const reportResult = (part: Prompt.ToolResultPart): string => {
  const result = (typeof part.result === "object" && part.result !== null ? part.result : {}) as Record<string, unknown>
  const name = typeof result.action_name === "string" ? result.action_name : part.name
  const status = typeof result.status_code === "number" ? ` (status ${result.status_code})` : ""
  if (part.isFailure || result.success === false) {
    const why = typeof result.error === "string" && result.error.length > 0 ? `: ${result.error}` : "."
    return `The action ${name} failed${status}${why}`
  }
  const response = result.response
  const details = typeof response === "object" && response !== null && !Array.isArray(response)
    ? Object.entries(response).filter(([, v]) => v === null || typeof v !== "object").slice(0, 5)
      .map(([key, v]) => `${key}: ${describeValue(v)}`)
    : []
  return `Done: ${name} succeeded${status}.${details.length > 0 ? ` Result: ${details.join(", ")}.` : ""}`
}

/** The embedded model's reply to a prompt. */
export const reply = (options: LanguageModel.ProviderOptions): Reply => {
  const { prompt } = options
  const last = prompt.content[prompt.content.length - 1]
  if (last?.role === "tool") {
    const results = last.content.flatMap((part) => (part.type === "tool-result" ? [part] : []))
    return { _tag: "Text", text: results.map(reportResult).join("\n") }
  }
  const message = lastUserText(prompt)
  if (options.toolChoice !== "none" && options.tools.length > 0) {
    const tools = options.tools.map((tool) => ({ tool, name: tool.name, description: Tool.getDescription(tool) ?? "" }))
    const chosen = recognizeAction(message, tools)
    if (chosen !== undefined) {
      return {
        _tag: "ToolCall",
        name: chosen.name,
        params: extractParameters(message, parameterSpecs(chosen.tool)).values
      }
    }
  }
  if (greeting.test(message)) {
    return { _tag: "Text", text: "Hello! Ask me a question about my documents, or ask me to run one of my actions." }
  }
  const answer = answerFrom(message, KnowledgeContext.parse(systemText(prompt)))
  return { _tag: "Text", text: answer?.text ?? nothingRelevant }
}

const usage = (prompt: Prompt.Prompt, output: string) => ({
  inputTokens: { total: countPromptTokens(prompt) },
  outputTokens: { total: countTokens(output) }
})

const callId = () => `call_${crypto.randomUUID()}`

/** The reply as streamed parts: text word by word (with its spacing), or one tool call. */
const streamParts = (options: LanguageModel.ProviderOptions): Array<Response.StreamPartEncoded> => {
  const answer = reply(options)
  const head: Response.StreamPartEncoded = { type: "response-metadata", modelId }
  if (answer._tag === "ToolCall") {
    const params = answer.params
    return [
      head,
      { type: "tool-call", id: callId(), name: answer.name, params, providerExecuted: false },
      { type: "finish", reason: "tool-calls", usage: usage(options.prompt, `${answer.name} ${JSON.stringify(params)}`) }
    ]
  }
  const words = answer.text.match(/\S+\s*/gu) ?? []
  return [
    head,
    { type: "text-start", id: "text" },
    ...words.map((delta): Response.StreamPartEncoded => ({ type: "text-delta", id: "text", delta })),
    { type: "text-end", id: "text" },
    { type: "finish", reason: "stop", usage: usage(options.prompt, answer.text) }
  ]
}

/** The embedded model as effect's `LanguageModel`. */
export const make: Effect.Effect<LanguageModel.LanguageModel> = LanguageModel.make({
  streamText: (options) => Stream.suspend(() => Stream.fromIterable(streamParts(options))),
  generateText: (options) =>
    Effect.sync(() => {
      const answer = reply(options)
      const parts: Array<Response.PartEncoded> = [{ type: "response-metadata", modelId }]
      if (answer._tag === "ToolCall") {
        parts.push({
          type: "tool-call",
          id: callId(),
          name: answer.name,
          params: answer.params,
          providerExecuted: false
        })
        parts.push({
          type: "finish",
          reason: "tool-calls",
          usage: usage(options.prompt, JSON.stringify(answer.params))
        })
      } else {
        parts.push({ type: "text", text: answer.text })
        parts.push({ type: "finish", reason: "stop", usage: usage(options.prompt, answer.text) })
      }
      return parts
    })
})

export const layer: Layer.Layer<LanguageModel.LanguageModel> = Layer.effect(LanguageModel.LanguageModel, make)
