/**
 * The action catalog as MCP tools: one tool per active action a key may run,
 * named after the action, described by it, with its parameters as the JSON
 * Schema of the tool's input.
 *
 * Tool names must be unique and short identifiers (`[A-Za-z0-9_-]`, at most
 * 64 characters here) while action names are free text and not unique: a
 * name is the action's name with other characters replaced by `_`, and when
 * two actions would get the same name both carry the first 8 characters of
 * their id (`create_ticket_1a2b3c4d`). A tool can also be called by its
 * action's id.
 */
import type { Actions } from "@agent-platform/domain"

/** A tool as `tools/list` describes it (MCP 2025-03-26 "Tool"). */
export interface McpTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: {
    readonly type: "object"
    readonly properties: Record<string, { readonly type: Actions.ParameterType; readonly description: string }>
    readonly required: ReadonlyArray<string>
    readonly additionalProperties: false
  }
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: boolean
    readonly openWorldHint: true
  }
}

/** A tool and the action it runs. */
export interface ActionTool {
  readonly actionId: string
  readonly tool: McpTool
}

const maxNameLength = 64

const baseName = (actionName: string) =>
  actionName
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9_-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, maxNameLength) || "action"

const withId = (name: string, id: string) => `${name.slice(0, maxNameLength - 9)}_${id.slice(0, 8)}`

/** The tool of every action, with unique names. */
export const actionTools = (actions: ReadonlyArray<Actions.Action>): ReadonlyArray<ActionTool> => {
  const counts = new Map<string, number>()
  for (const action of actions) counts.set(baseName(action.name), (counts.get(baseName(action.name)) ?? 0) + 1)
  return actions.map((action) => {
    const base = baseName(action.name)
    return {
      actionId: action.id,
      tool: {
        name: (counts.get(base) ?? 0) > 1 ? withId(base, action.id) : base,
        description: action.description.length > 0 ? action.description : action.name,
        inputSchema: {
          type: "object",
          properties: Object.fromEntries(
            action.parameters.map((p) => [p.name, { type: p.type, description: p.description }])
          ),
          required: action.parameters.filter((p) => p.required).map((p) => p.name),
          // Params the action does not declare are never forwarded to the remote system.
          additionalProperties: false
        },
        annotations: {
          title: action.name,
          // A hint, not a promise: GET is meant to read.
          readOnlyHint: action.http_method === "GET",
          openWorldHint: true
        }
      }
    }
  })
}

/** The action a tool name (or an action id) designates among the tools, if any. */
export const resolveTool = (tools: ReadonlyArray<ActionTool>, name: string): ActionTool | undefined =>
  tools.find((t) => t.tool.name === name) ?? tools.find((t) => t.actionId === name)
