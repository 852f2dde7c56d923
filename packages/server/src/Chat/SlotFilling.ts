/**
 * The slot-filling conversation (spec: "Execute bypasses the agent's
 * slot-filling conversation", so chat has one): an action the user asked for
 * runs only once its required parameters are known; the agent asks for the
 * missing ones one at a time, showing a `parameter_form`, and the state lives
 * with the chat (chat_pending_actions) between turns. An action in `confirm`
 * mode then waits for an explicit "yes"; the "yes", verbatim, and the request
 * it answered go with the execution into its provenance record.
 *
 * This module holds the rules and the words; ChatEngine runs them.
 */
import type { Actions, Chat, Principal } from "@agent-platform/domain"
import { coerce, missingRequired, type ParameterSpec } from "../Ai/ParameterExtraction.ts"
import type { ChatAction } from "./ChatActions.ts"
import type { PendingActionRow } from "./ChatRepo.ts"

/** Who an action's question is put to: the turn's caller, a signed-in user or an API key. */
export const askedOf = (caller: Principal): Pick<PendingActionRow, "asked_user_id" | "asked_key_id"> => ({
  asked_user_id: caller._tag === "User" ? caller.userId : null,
  asked_key_id: caller._tag === "Key" ? caller.keyId : null
})

/**
 * Whether `caller`'s message answers the action in preparation: only the one
 * it was asked of does. In a room every participant writes to the same chat,
 * and another participant's "yes" must not run an action as the person who
 * asked for it. Rows stored before migration 0022 name nobody: the caller
 * answers them, as before.
 */
export const answers = (
  pending: Pick<PendingActionRow, "asked_user_id" | "asked_key_id">,
  caller: Principal
): boolean => {
  if (pending.asked_user_id === null && pending.asked_key_id === null) return true
  return caller._tag === "User" ? pending.asked_user_id === caller.userId : pending.asked_key_id === caller.keyId
}

const typeMatches = (type: string, value: unknown) => {
  switch (type) {
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "boolean":
      return typeof value === "boolean"
    case "array":
      return Array.isArray(value)
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value)
    default:
      return typeof value === "string" && value.trim().length > 0
  }
}

/**
 * The declared parameters among raw values (a model's tool call, stored
 * state), each of its type — converted from text where it can be — and the
 * names whose value does not fit. Undeclared names are dropped.
 */
export const acceptParams = (
  specs: ReadonlyArray<ParameterSpec>,
  raw: unknown
): { values: Record<string, unknown>; invalid: Array<string> } => {
  const source = typeof raw === "object" && raw !== null ? raw as Record<string, unknown> : {}
  const values: Record<string, unknown> = {}
  const invalid: Array<string> = []
  for (const spec of specs) {
    const value = source[spec.name]
    if (value === undefined || value === null || value === "") continue
    if (typeMatches(spec.type, value)) {
      values[spec.name] = typeof value === "string" ? value.trim() : value
      continue
    }
    const converted = coerce(spec.type, typeof value === "string" ? value : JSON.stringify(value))
    if (converted === undefined) invalid.push(spec.name)
    else values[spec.name] = converted
  }
  return { values, invalid }
}

/** What the next step of an action being prepared is. */
export type Next =
  | { readonly _tag: "Ask"; readonly parameter: ParameterSpec; readonly missing: ReadonlyArray<ParameterSpec> }
  | { readonly _tag: "Confirm" }
  | { readonly _tag: "Run" }

export const nextStep = (action: ChatAction, params: Record<string, unknown>): Next => {
  const missing = missingRequired(action.parameters, params)
  if (missing.length > 0) return { _tag: "Ask", parameter: missing[0], missing }
  return action.requiresConfirmation ? { _tag: "Confirm" } : { _tag: "Run" }
}

const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

/** The question for a missing parameter; says first why an answer was not accepted. */
export const question = (action: ChatAction, parameter: ParameterSpec, rejected: string | undefined): string => {
  const why = rejected === undefined ? "" : `"${rejected}" is not a valid ${parameter.type} for ${parameter.name}. `
  const hint = parameter.description.trim().length > 0 ? ` (${parameter.description.trim()})` : ""
  return `${why}To run ${action.name} I need the ${parameter.name}${hint}. What should it be?`
}

/** The `parameter_form` component: every parameter with its value so far, and what is missing. */
export const parameterForm = (
  action: ChatAction,
  params: Record<string, unknown>,
  missing: ReadonlyArray<ParameterSpec>
) => ({
  type: "component" as const,
  component_name: "parameter_form",
  props: {
    action_id: action.id,
    action_name: action.name,
    description: action.description,
    fields: action.parameters.map((p) => ({
      name: p.name,
      type: p.type,
      description: p.description,
      required: p.required,
      value: params[p.name] ?? null
    })),
    missing: missing.map((p) => p.name),
    asking: missing[0]?.name ?? null
  } satisfies typeof Chat.ParameterFormProps.Type
})

/** The request to confirm an action that requires it. */
export const confirmationRequest = (action: ChatAction, params: Record<string, unknown>): string => {
  const shown = Object.entries(params).map(([name, value]) => `${name}: ${show(value)}`).join(", ")
  return `Please confirm: run ${action.name}${
    shown.length > 0 ? ` with ${shown}` : ""
  }? Reply "yes" to run it or "no" to cancel.`
}

/** The `action_confirmation` component shown with that request. */
export const confirmationCard = (action: ChatAction, params: Record<string, unknown>) => ({
  type: "component" as const,
  component_name: "action_confirmation",
  props: {
    action_id: action.id,
    action_name: action.name,
    params,
    requires_confirmation: true
  } satisfies typeof Chat.ActionConfirmationProps.Type
})

/** What the agent says after an execution in shadow mode (the runner's answer says nothing was sent); else undefined. */
export const shadowNotice = (response: Actions.ActionResponse): string | undefined => {
  const body = response.response
  return typeof body === "object" && body !== null && "shadow" in body && body.shadow === true &&
      "message" in body && typeof body.message === "string"
    ? body.message
    : undefined
}

/** The `system_alert` of an execution. */
export const systemAlert = (response: Actions.ActionResponse) => ({
  type: "system_alert" as const,
  data: {
    action_id: response.action_id,
    action_name: response.action_name,
    success: response.success,
    status_code: response.status_code
  }
})

/** The `action_result` card of an execution. */
export const actionResultCard = (response: Actions.ActionResponse) => ({
  type: "component" as const,
  component_name: "action_result",
  props: { ...response } satisfies typeof Chat.ActionResultProps.Type
})

export const cancelled = (action: ChatAction) => `Okay, I cancelled ${action.name}; nothing was run.`
export const stillWaiting = (action: ChatAction) => `Please reply "yes" to run ${action.name}, or "no" to cancel it.`
export const unavailable = "The action I was preparing is no longer available to me, so I dropped it."
/** Why the agent does not start preparing an action: it waits for another person's answer in this chat. */
export const waitingForAnother = (action: ChatAction) =>
  `I am waiting for someone else's answer about another action, and I prepare one action at a time in this chat: ask me about ${action.name} again once they have answered.`
