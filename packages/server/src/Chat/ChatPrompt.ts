/**
 * The prompt of a chat turn: a system message (the agent, its instructions,
 * how to use knowledge and actions, and the retrieved knowledge excerpts), the
 * conversation so far (seed history, then stored messages) and the user's
 * message; and the agent's actions as tools, named so any provider accepts
 * them (`^[A-Za-z0-9_-]{1,64}$`).
 */
import { Effect } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as KnowledgeContext from "../Ai/KnowledgeContext.ts"
import type { ChatAction } from "./ChatActions.ts"
import type { AgentRow } from "./ChatRepo.ts"

export interface Turn {
  readonly role: "user" | "agent"
  readonly content: string
}

/** The system message for an agent and its retrieved excerpts (none given: a turn that reports an action's result). */
export const systemMessage = (
  agent: AgentRow,
  excerpts: ReadonlyArray<KnowledgeContext.Excerpt> | undefined,
  hasActions: boolean
): string =>
  [
    `You are ${agent.name}${agent.summary.trim().length > 0 ? `: ${agent.summary.trim()}` : "."}`,
    agent.instructions?.trim() ?? "",
    hasActions
      ? "When the user asks you to do something one of your tools does, call that tool with the parameters the user gave; the platform asks the user for missing ones."
      : "",
    excerpts === undefined ? "" : KnowledgeContext.render(excerpts)
  ].filter((part) => part.length > 0).join("\n\n")

/** The prompt's messages: system, the conversation so far, then the user's message. */
export const messages = (
  system: string,
  conversation: ReadonlyArray<Turn>,
  message: string
): Array<Prompt.MessageEncoded> => [
  { role: "system", content: system },
  ...conversation.map((turn): Prompt.MessageEncoded =>
    turn.role === "user"
      ? { role: "user", content: [{ type: "text", text: turn.content }] }
      : { role: "assistant", content: [{ type: "text", text: turn.content }] }
  ),
  { role: "user", content: [{ type: "text", text: message }] }
]

/** The assistant's tool calls and the platform's results, appended after a round that called tools. */
export const toolExchange = (
  text: string,
  calls: ReadonlyArray<
    {
      readonly id: string
      readonly name: string
      readonly params: unknown
      readonly result: unknown
      readonly isFailure: boolean
    }
  >
): Array<Prompt.MessageEncoded> => [
  {
    role: "assistant",
    content: [
      ...(text.length > 0 ? [{ type: "text" as const, text }] : []),
      ...calls.map((call) => ({
        type: "tool-call" as const,
        id: call.id,
        name: call.name,
        params: call.params,
        providerExecuted: false
      }))
    ]
  },
  {
    role: "tool",
    content: calls.map((call) => ({
      type: "tool-result" as const,
      id: call.id,
      name: call.name,
      isFailure: call.isFailure,
      result: call.result,
      providerExecuted: false
    }))
  }
]

/** A tool name for an action: its name's letters, digits, `_` and `-`, unique among the agent's tools. */
const toolNames = (actions: ReadonlyArray<ChatAction>): Array<string> => {
  const used = new Set<string>()
  return actions.map((action) => {
    const base = action.name.normalize("NFKD").replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 56) ||
      "action"
    let name = base
    for (let i = 2; used.has(name); i++) name = `${base}_${i}`
    used.add(name)
    return name
  })
}

/** The JSON schema of an action's parameters, as tools declare them. */
const parametersSchema = (action: ChatAction) => ({
  type: "object",
  properties: Object.fromEntries(action.parameters.map((p) => [p.name, { type: p.type, description: p.description }])),
  required: action.parameters.filter((p) => p.required).map((p) => p.name),
  additionalProperties: false
})

export interface ActionTools {
  /** The toolkit to offer the model (its calls are resolved by the chat engine, never by the toolkit). */
  readonly toolkit: Toolkit.WithHandler<Record<string, Tool.Any>>
  /** The action behind a tool name. */
  readonly actionOf: (toolName: string) => ChatAction | undefined
  readonly toolNameOf: (actionId: string) => string
}

/** The agent's actions as tools. */
export const actionTools = (actions: ReadonlyArray<ChatAction>): ActionTools => {
  const names = toolNames(actions)
  const tools: Record<string, Tool.Any> = {}
  const byName = new Map<string, ChatAction>()
  const byId = new Map<string, string>()
  actions.forEach((action, i) => {
    tools[names[i]] = Tool.dynamic(names[i], {
      description: action.description || action.name,
      parameters: parametersSchema(action)
    })
    byName.set(names[i], action)
    byId.set(action.id, names[i])
  })
  return {
    toolkit: {
      tools,
      handle: (name) => Effect.die(new Error(`tool ${String(name)} is run by the chat engine, not by the toolkit`))
    },
    actionOf: (toolName) => byName.get(toolName),
    toolNameOf: (actionId) => byId.get(actionId) ?? actionId
  }
}
