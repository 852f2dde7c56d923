/**
 * How a chat turn reads in a terminal: the answer's `{text}` tokens written as
 * they arrive, and every other event on a line of its own in brackets —
 * `[action create_ticket: ok 201]`, a parameter form with what is filled and
 * what is still asked for, a confirmation, an action's result.
 *
 * Events are rendered to text here, without printing, so that the command
 * decides where the text goes and the rendering can be read (and tested) on
 * its own.
 */
import { type Actions, Chat } from "@agent-platform/domain"
import { Option, Schema } from "effect"
import * as Output from "./Output.ts"

/** Where the transcript stands: whether the last text written left a line open. */
export interface Transcript {
  readonly lineOpen: boolean
  /** Whether answers start with the agent's name (`Support: ...`), for a person at a terminal. */
  readonly showAgent: boolean
  /** The name that goes before the answer's first token, once the turn's agent is known. */
  readonly agentPrefix: string
}

export const start = (options: { readonly showAgent: boolean }): Transcript => ({
  lineOpen: false,
  agentPrefix: "",
  ...options
})

/** What to write for an event, and where the transcript stands afterwards. */
export interface Rendered {
  readonly text: string
  readonly next: Transcript
}

// The component props, as the domain declares them.
const decodeForm = Schema.decodeUnknownOption(Chat.ParameterFormProps)
const decodeConfirmation = Schema.decodeUnknownOption(Chat.ActionConfirmationProps)
const decodeResult = Schema.decodeUnknownOption(Chat.ActionResultProps)

/** A value as one short line: strings as they are, anything else as compact JSON. */
const show = (value: unknown, max = 120): string => {
  const text = Output.printable(typeof value === "string" ? value : JSON.stringify(value) ?? String(value))
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

const parameterForm = (form: typeof Chat.ParameterFormProps.Type): string => {
  const width = Math.max(...form.fields.map((field) => field.name.length + (field.required ? 1 : 0)))
  const fields = form.fields.map((field) => {
    const label = `${field.name}${field.required ? "*" : ""}`.padEnd(width)
    const filled = field.value !== null && field.value !== undefined
    const description = field.description.trim()
    return `  ${label}  ${
      filled ? `= ${show(field.value)}` : `?${description.length > 0 ? ` ${show(description)}` : ""}`
    }`
  })
  const missing = form.missing.length > 0 ? `: missing ${form.missing.map((name) => show(name)).join(", ")}` : ""
  return [`[form ${show(form.action_name)}${missing}]`, ...fields].join("\n")
}

const confirmation = (card: typeof Chat.ActionConfirmationProps.Type): string => {
  const params = Object.entries(card.params).map(([name, value]) => `${show(name)}=${show(value, 60)}`).join(", ")
  return `[confirm ${show(card.action_name)}${params.length > 0 ? `: ${params}` : ""}]`
}

const actionResult = (result: Actions.ActionResponse): string =>
  `[result ${show(result.action_name)}: ${
    result.success ? show(result.response) : `error ${show(result.error ?? result.response)}`
  }]`

/** A component as lines; one this CLI does not know is named, not shown. */
const component = (event: typeof Chat.ComponentEvent.Type): string => {
  const generic = `[component ${show(event.component_name)}]`
  switch (event.component_name) {
    case "parameter_form":
      return Option.match(decodeForm(event.props), { onNone: () => generic, onSome: parameterForm })
    case "action_confirmation":
      return Option.match(decodeConfirmation(event.props), { onNone: () => generic, onSome: confirmation })
    case "action_result":
      return Option.match(decodeResult(event.props), { onNone: () => generic, onSome: actionResult })
    default:
      return generic
  }
}

/** The line(s) of an event that is neither a token nor `agent_info`; none for `error`, which the command reports. */
const lines = (event: Chat.ChatEvent): string | undefined => {
  if (!("type" in event)) return undefined
  switch (event.type) {
    case "system_alert":
      return `[action ${show(event.data.action_name)}: ${
        event.data.success ? "ok" : "failed"
      } ${event.data.status_code}]`
    case "component":
      return component(event)
    default:
      return undefined
  }
}

/** Renders one event: tokens as they are, other events on lines of their own. */
export const render = (transcript: Transcript, event: Chat.ChatEvent): Rendered => {
  if ("text" in event) {
    const text = Output.printableText(event.text)
    if (text.length === 0) return { text, next: transcript }
    const prefix = transcript.agentPrefix.length > 0 && transcript.lineOpen
      ? `\n${transcript.agentPrefix}`
      : transcript.agentPrefix
    return { text: `${prefix}${text}`, next: { ...transcript, agentPrefix: "", lineOpen: !text.endsWith("\n") } }
  }
  if (event.type === "agent_info") {
    // Shown with the first token: a form or an alert may come before it.
    const agentPrefix = transcript.showAgent && event.agent_name !== undefined ? `${show(event.agent_name)}: ` : ""
    return { text: "", next: { ...transcript, agentPrefix } }
  }
  const shown = lines(event)
  if (shown === undefined) return { text: "", next: transcript }
  return { text: `${transcript.lineOpen ? "\n" : ""}${shown}\n`, next: { ...transcript, lineOpen: false } }
}

/** What ends a turn: a line break if the answer left its line open. */
export const end = (transcript: Transcript): Rendered => ({
  text: transcript.lineOpen ? "\n" : "",
  next: { ...transcript, lineOpen: false, agentPrefix: "" }
})
