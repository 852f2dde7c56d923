/** Chat schemas (spec: POST /v1/chat/completions, "Events", "Chat history"). */
import { Schema } from "effect"
import { ActionResponse } from "../Actions/Action.ts"
import { StorableString } from "../Text.ts"

export const maxMessageLength = 16_000
export const maxHistoryItems = 50

export const HistoryItem = Schema.Struct({
  role: Schema.Literals(["user", "agent", "assistant"]),
  content: StorableString.check(Schema.isMaxLength(maxMessageLength))
})

export const ChatRequest = Schema.Struct({
  message: StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(maxMessageLength)),
  space: Schema.optionalKey(StorableString).annotate({
    description: "Space code or id; default the key's space, else the tenant's first"
  }),
  chat_id: Schema.optionalKey(Schema.NullOr(StorableString)).annotate({
    description: "Continue a chat; null or absent starts one"
  }),
  history: Schema.optionalKey(Schema.Array(HistoryItem).check(Schema.isMaxLength(maxHistoryItems))).annotate({
    description: "Seeds the context of a new chat"
  })
}).annotate({ examples: [{ message: "How long do refunds take?", space: "support" }] })
export type ChatRequest = typeof ChatRequest.Type

/** `{type: agent_info}`: the agent the router chose, first event of every stream. */
export const AgentInfoEvent = Schema.Struct({
  type: Schema.Literal("agent_info"),
  agent_id: Schema.String,
  agent_name: Schema.optionalKey(Schema.String),
  chat_id: Schema.String
})

/** `{text}`: a token of the answer; concatenate in order. */
export const TextEvent = Schema.Struct({ text: Schema.String })

/** `{type: system_alert}`: an action was executed. */
export const SystemAlertEvent = Schema.Struct({
  type: Schema.Literal("system_alert"),
  data: Schema.Struct({
    action_id: Schema.String,
    action_name: Schema.String,
    success: Schema.Boolean,
    status_code: Schema.Int
  })
})

/** The props of the `parameter_form` component: the action's parameters, their values so far, what is missing. */
export const ParameterFormProps = Schema.Struct({
  action_id: Schema.String,
  action_name: Schema.String,
  description: Schema.String,
  fields: Schema.Array(Schema.Struct({
    name: Schema.String,
    type: Schema.String,
    description: Schema.String,
    required: Schema.Boolean,
    value: Schema.Unknown.annotate({ description: "The value collected so far, or null" })
  })),
  missing: Schema.Array(Schema.String),
  asking: Schema.NullOr(Schema.String).annotate({ description: "The parameter the agent is asking for now" })
}).annotate({ identifier: "ParameterFormProps" })

/** The props of the `action_confirmation` component: an action that runs only after the user says yes. */
export const ActionConfirmationProps = Schema.Struct({
  action_id: Schema.String,
  action_name: Schema.String,
  params: Schema.Record(Schema.String, Schema.Unknown),
  requires_confirmation: Schema.Literal(true)
}).annotate({ identifier: "ActionConfirmationProps" })

/** The props of the `action_result` component: the execution's ActionResponse. */
export const ActionResultProps = ActionResponse

/** `{type: component}`: a generative-UI widget (`action_result`, `parameter_form`, `action_confirmation`). */
export const ComponentEvent = Schema.Struct({
  type: Schema.Literal("component"),
  component_name: Schema.String,
  props: Schema.Record(Schema.String, Schema.Unknown)
})

/** `{type: error}`: the stream failed after it started; `[DONE]` follows. */
export const ErrorEvent = Schema.Struct({ type: Schema.Literal("error"), error: Schema.String })

/** Every JSON event of the chat stream; the stream ends with the line `data: [DONE]`. */
export const ChatEvent = Schema.Union([AgentInfoEvent, SystemAlertEvent, ComponentEvent, ErrorEvent, TextEvent])
export type ChatEvent = typeof ChatEvent.Type

export const ChatMessage = Schema.Struct({
  id: Schema.String,
  role: Schema.Literals(["user", "agent"]),
  content: Schema.String,
  created_at: Schema.String,
  agent_id: Schema.optionalKey(Schema.String)
})

export const ChatHistory = Schema.Struct({
  chat_id: Schema.String,
  messages: Schema.Array(ChatMessage)
}).annotate({
  identifier: "ChatHistory",
  examples: [{
    chat_id: "7e1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b",
    messages: [
      {
        id: "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9",
        role: "user",
        content: "How long do refunds take?",
        created_at: "2026-01-15T09:31:00.000Z"
      },
      {
        id: "2c3d4e5f-6071-4829-93a4-b5c6d7e8f9a0",
        role: "agent",
        content: "Refunds are issued within 14 days of delivery [refund-policy.md].",
        created_at: "2026-01-15T09:31:01.000Z",
        agent_id: "5f0c7a52-3c1e-4c55-9a4b-0d7f1e2a9b10"
      }
    ]
  }]
})
