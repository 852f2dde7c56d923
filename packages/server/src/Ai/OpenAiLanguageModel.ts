/**
 * effect's `LanguageModel` over an OpenAI-compatible `/chat/completions`:
 * the prompt and tools translated to the chat-completions format, streamed
 * responses (SSE deltas) translated to effect's response parts — text deltas,
 * tool calls assembled from their argument fragments, and a finish part with
 * the provider's token usage.
 */
import { Effect, Layer, Schema, Stream } from "effect"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import * as Tool from "effect/ai/Tool"
import type * as HttpClient from "effect/http/HttpClient"
import { OpenAiClient, type OpenAiConfig } from "./OpenAiClient.ts"

// ---------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------

type ChatMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | {
    readonly role: "assistant"
    readonly content: string | null
    readonly tool_calls?: ReadonlyArray<{
      readonly id: string
      readonly type: "function"
      readonly function: { readonly name: string; readonly arguments: string }
    }>
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string }

/** The prompt as chat-completions messages. */
export const toMessages = (prompt: Prompt.Prompt): Array<ChatMessage> =>
  prompt.content.flatMap((message): Array<ChatMessage> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }]
      case "user":
        return [{
          role: "user",
          content: message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
        }]
      case "assistant": {
        const text = message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
        const calls = message.content.flatMap((part) =>
          part.type === "tool-call" && !part.providerExecuted
            ? [{
              id: part.id,
              type: "function" as const,
              function: { name: part.name, arguments: JSON.stringify(part.params ?? {}) }
            }]
            : []
        )
        return [{
          role: "assistant",
          content: text.length > 0 ? text : null,
          ...(calls.length > 0 ? { tool_calls: calls } : {})
        }]
      }
      case "tool":
        return message.content.flatMap((part) =>
          part.type === "tool-result"
            ? [{ role: "tool" as const, tool_call_id: part.id, content: JSON.stringify(part.result ?? null) }]
            : []
        )
    }
  })

const toToolChoice = (choice: LanguageModel.ProviderOptions["toolChoice"]) => {
  if (typeof choice === "string") return choice
  if ("tool" in choice) return { type: "function", function: { name: choice.tool } }
  return choice.mode ?? "auto"
}

/** The request body of `/chat/completions`. */
export const requestBody = (model: string, options: LanguageModel.ProviderOptions, stream: boolean) => {
  const tools = options.tools.filter((tool) => !Tool.isProviderDefined(tool)).map((tool) => ({
    type: "function",
    function: { name: tool.name, description: Tool.getDescription(tool) ?? "", parameters: Tool.getJsonSchema(tool) }
  }))
  const responseFormat = options.responseFormat.type === "json"
    ? {
      response_format: {
        type: "json_schema",
        json_schema: {
          name: options.responseFormat.objectName,
          schema: Tool.getJsonSchemaFromSchema(options.responseFormat.schema),
          strict: false
        }
      }
    }
    : {}
  return {
    model,
    messages: toMessages(options.prompt),
    ...(tools.length > 0 ? { tools, tool_choice: toToolChoice(options.toolChoice) } : {}),
    ...responseFormat,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
  }
}

// ---------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------

const UsageFields = Schema.Struct({
  prompt_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  completion_tokens: Schema.optional(Schema.NullOr(Schema.Number))
})

const Chunk = Schema.Struct({
  id: Schema.optional(Schema.NullOr(Schema.String)),
  model: Schema.optional(Schema.NullOr(Schema.String)),
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
        index: Schema.optional(Schema.NullOr(Schema.Number)),
        id: Schema.optional(Schema.NullOr(Schema.String)),
        function: Schema.optional(Schema.NullOr(Schema.Struct({
          name: Schema.optional(Schema.NullOr(Schema.String)),
          arguments: Schema.optional(Schema.NullOr(Schema.String))
        })))
      }))))
    }))),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })))),
  usage: Schema.optional(Schema.NullOr(UsageFields)),
  error: Schema.optional(Schema.Unknown)
})
type Chunk = typeof Chunk.Type

const Completion = Schema.Struct({
  id: Schema.optional(Schema.NullOr(Schema.String)),
  model: Schema.optional(Schema.NullOr(Schema.String)),
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
        id: Schema.String,
        function: Schema.Struct({ name: Schema.String, arguments: Schema.optional(Schema.NullOr(Schema.String)) })
      }))))
    }),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Schema.NullOr(UsageFields))
})

const invalid = (method: string, description: string) =>
  AiError.make({ module: "OpenAiCompatible", method, reason: new AiError.InvalidResponseError({ description }) })

const decodeChunk = (data: string) =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(Chunk))(data).pipe(
    Effect.mapError((error) => invalid("streamText", `unexpected chunk: ${error.message}`))
  )

const finishReason = (reason: string | null | undefined): Response.FinishReason => {
  switch (reason) {
    case "stop":
      return "stop"
    case "length":
      return "length"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "content_filter":
      return "content-filter"
    case null:
    case undefined:
      return "unknown"
    default:
      return "other"
  }
}

const usageOf = (usage: typeof UsageFields.Type | null | undefined) => ({
  inputTokens: { total: usage?.prompt_tokens ?? undefined },
  outputTokens: { total: usage?.completion_tokens ?? undefined }
})

/** Tool arguments as an object: the JSON the model wrote, `{}` when it wrote none. */
const parseArguments = (method: string, name: string, text: string) =>
  Effect.try({
    try: () => (text.trim() === "" ? {} : JSON.parse(text) as unknown),
    catch: () => invalid(method, `the model sent malformed arguments for tool ${name}: ${text.slice(0, 200)}`)
  })

/**
 * Turns the chunks of one streamed completion into response parts. Text and
 * argument fragments pass through as they come; a tool call is complete (and
 * emitted) once the stream ends; the finish part waits for the usage chunk
 * that follows the last choice.
 */
const makeTranslation = (method: string) => {
  let textStarted = false
  let metadataSent = false
  let reason: Response.FinishReason = "unknown"
  let usage: typeof UsageFields.Type | undefined
  const calls = new Map<number, { id: string; name: string; args: string }>()

  const onChunk = (chunk: Chunk): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> => {
    const parts: Array<Response.StreamPartEncoded> = []
    if (chunk.error !== undefined && chunk.error !== null) {
      const error = chunk.error
      const message = typeof error === "object" && "message" in error ? String(error.message) : String(error)
      return Effect.fail(AiError.make({
        module: "OpenAiCompatible",
        method,
        reason: new AiError.InternalProviderError({ description: `the provider failed mid-stream: ${message}` })
      }))
    }
    if (!metadataSent) {
      metadataSent = true
      parts.push({ type: "response-metadata", id: chunk.id ?? undefined, modelId: chunk.model ?? undefined })
    }
    for (const choice of chunk.choices ?? []) {
      const content = choice.delta?.content
      if (content !== undefined && content !== null && content.length > 0) {
        if (!textStarted) {
          textStarted = true
          parts.push({ type: "text-start", id: "text" })
        }
        parts.push({ type: "text-delta", id: "text", delta: content })
      }
      for (const call of choice.delta?.tool_calls ?? []) {
        const index = call.index ?? 0
        let current = calls.get(index)
        if (current === undefined) {
          current = { id: call.id ?? `call_${index}`, name: call.function?.name ?? "", args: "" }
          calls.set(index, current)
          parts.push({ type: "tool-params-start", id: current.id, name: current.name })
        } else if (call.function?.name) {
          current.name += call.function.name
        }
        const fragment = call.function?.arguments
        if (fragment) {
          current.args += fragment
          parts.push({ type: "tool-params-delta", id: current.id, delta: fragment })
        }
      }
      if (choice.finish_reason) reason = finishReason(choice.finish_reason)
    }
    if (chunk.usage) usage = chunk.usage
    return Effect.succeed(parts)
  }

  const finish = Effect.gen(function*() {
    const parts: Array<Response.StreamPartEncoded> = []
    if (textStarted) parts.push({ type: "text-end", id: "text" })
    for (const call of calls.values()) {
      parts.push({ type: "tool-params-end", id: call.id })
      const params = yield* parseArguments(method, call.name, call.args)
      parts.push({ type: "tool-call", id: call.id, name: call.name, params, providerExecuted: false })
    }
    parts.push({
      type: "finish",
      reason: calls.size > 0 && reason === "stop" ? "tool-calls" : reason,
      usage: usageOf(usage)
    })
    return parts
  })

  return { onChunk, finish }
}

/** The language model of an OpenAI-compatible provider. */
export const make = Effect.gen(function*() {
  const client = yield* OpenAiClient
  const model = client.config.model
  return yield* LanguageModel.make({
    streamText: (options) =>
      Stream.unwrap(Effect.gen(function*() {
        const events = yield* client.postEvents("/chat/completions", requestBody(model, options, true), "streamText")
        const translation = makeTranslation("streamText")
        return events.pipe(
          Stream.takeWhile((event) => event.data.trim() !== "[DONE]"),
          Stream.filter((event) => event.data.trim().length > 0),
          Stream.mapEffect((event) => Effect.flatMap(decodeChunk(event.data), (chunk) => translation.onChunk(chunk))),
          Stream.concat(Stream.fromEffect(translation.finish)),
          Stream.flattenIterable
        )
      })),
    generateText: Effect.fnUntraced(function*(options) {
      const json = yield* client.postJson("/chat/completions", requestBody(model, options, false), "generateText")
      const completion = yield* Schema.decodeUnknownEffect(Completion)(json).pipe(
        Effect.mapError((error) => invalid("generateText", `unexpected completion: ${error.message}`))
      )
      const parts: Array<Response.PartEncoded> = [{
        type: "response-metadata",
        id: completion.id ?? undefined,
        modelId: completion.model ?? undefined
      }]
      const choice = completion.choices[0]
      if (choice?.message.content) parts.push({ type: "text", text: choice.message.content })
      for (const call of choice?.message.tool_calls ?? []) {
        const params = yield* parseArguments("generateText", call.function.name, call.function.arguments ?? "")
        parts.push({ type: "tool-call", id: call.id, name: call.function.name, params, providerExecuted: false })
      }
      const calls = choice?.message.tool_calls?.length ?? 0
      const reason = finishReason(choice?.finish_reason)
      parts.push({
        type: "finish",
        reason: calls > 0 && reason === "stop" ? "tool-calls" : reason,
        usage: usageOf(completion.usage)
      })
      return parts
    })
  })
})

/** The provider's LanguageModel for a configuration. */
export const layer = (config: OpenAiConfig): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel.LanguageModel, make).pipe(Layer.provide(OpenAiClient.layer(config)))
