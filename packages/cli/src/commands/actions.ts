/**
 * `actions create|list|assign`: the tenant's catalog of actions — HTTP calls
 * agents run against other systems — and which agent may run which (admin).
 */
import { ActionAdmin, Actions } from "@agent-platform/domain"
import { Console, Effect, Schema, SchemaTransformation } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as HttpUrl from "../HttpUrl.ts"
import * as Invocation from "../Invocation.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

/** `--param name:type[:required|optional][:description]`, e.g. `title:string:required:What is wrong`. */
const ParameterSpec = Schema.String.pipe(
  Schema.decodeTo(
    Actions.ActionParameter,
    SchemaTransformation.transform({
      decode: (spec: string) => {
        const [name = "", type = "string", need = "required", ...description] = spec.split(":")
        return {
          name,
          type: type as Actions.ParameterType,
          required: need === "required" ? true : need === "optional" ? false : (need as unknown as boolean),
          description: description.join(":")
        }
      },
      encode: (parameter) =>
        `${parameter.name}:${parameter.type}:${parameter.required ? "required" : "optional"}:${parameter.description}`
    })
  )
)

/** `--header "Name: value"`. */
const HeaderSpec = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((text: string) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/u.test(text) || "must be \"Name: value\"")
  ),
  Schema.decodeTo(
    Schema.Tuple([Schema.String, Schema.String]),
    SchemaTransformation.transform({
      decode: (text: string) => {
        const at = text.indexOf(":")
        return [text.slice(0, at).trim(), text.slice(at + 1).trim()] as const
      },
      encode: ([name, value]) => `${name}: ${value}`
    })
  )
)

const create = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(
      Flag.withDescription("The action's name, as agents and MCP clients see it (e.g. create_ticket)"),
      Flag.withSchema(ActionAdmin.CreateAction.fields.name)
    ),
    description: Flag.String("description").pipe(
      Flag.withDescription("What it does: chat recognizes requests for it by this text"),
      Flag.withSchema(ActionAdmin.CreateAction.fields.description)
    ),
    method: Flag.Literals("method", ["GET", "POST", "PUT", "PATCH", "DELETE"] as const).pipe(
      Flag.withDescription("The HTTP method of the call (default POST)"),
      Flag.withDefault("POST" as const)
    ),
    url: Flag.String("endpoint").pipe(
      Flag.withDescription("The URL called; `{name}` placeholders are filled from the parameters"),
      Flag.filter(HttpUrl.isHttpUrl, () => HttpUrl.rule),
      Flag.withSchema(ActionAdmin.CreateAction.fields.url)
    ),
    headers: Flag.String("header").pipe(
      Flag.withDescription(
        "A header sent with the call, \"Name: value\"; values may use tenant secrets as {{secret:NAME}}; repeatable"
      ),
      Flag.withSchema(HeaderSpec),
      Flag.atLeast(0)
    ),
    parameters: Flag.String("param").pipe(
      Flag.withDescription(
        "A parameter, name:type[:required|optional][:description] (type: string, number, integer, boolean, object, array); repeatable"
      ),
      Flag.withSchema(ParameterSpec),
      Flag.atLeast(0)
    ),
    requiresConfirmation: Flag.Boolean("requires-confirmation").pipe(
      Flag.withDescription("Chat asks the user to confirm before running it"),
      Flag.withDefault(false)
    ),
    inactive: Flag.Boolean("inactive").pipe(Flag.withDescription("Create it switched off"), Flag.withDefault(false))
  },
  Effect.fnUntraced(function*({ name, description, method, url, headers, parameters, requiresConfirmation, inactive }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const action = yield* client.api.actionsAdmin.create({
        payload: {
          name,
          description,
          http_method: method,
          url,
          ...(headers.length === 0 ? {} : { headers: Object.fromEntries(headers) }),
          parameters,
          is_active: !inactive,
          requires_confirmation: requiresConfirmation
        }
      })
      if (json) return yield* Output.json(action)
      yield* Console.log(
        `Created action ${Output.printable(action.name)} (${action.http_method} ${
          Output.printable(action.url)
        }), id ${action.id}.`
      )
      yield* Console.log(
        `Next: let an agent run it with ${yield* Invocation.command(
          `actions assign --agent AGENT --action ${action.name}`
        )}.`
      )
    }))
  })
).pipe(
  Command.withDescription("Add an action to the catalog"),
  Command.withExamples([{
    command:
      "agent-platform actions create --name create_ticket --description \"Create a support ticket\" --endpoint https://tickets.example.com/tickets --param \"title:string:required:What is wrong\" --param \"priority:string:required:low, normal or high\"",
    description: "A POST with two required parameters, asked for in chat when missing"
  }])
)

const list = Command.make(
  "list",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const listed = yield* client.api.actionsAdmin.list()
      if (json) return yield* Output.json(listed)
      if (listed.actions.length === 0) {
        return yield* Console.log(`No actions yet: create one with ${yield* Invocation.command("actions create")}.`)
      }
      yield* Output.table<ActionAdmin.AdminAction>([
        ["id", (action) => action.id],
        ["name", (action) => action.name],
        ["method", (action) => action.http_method],
        ["url", (action) => action.url],
        ["params", (action) => action.parameters.map((p) => `${p.name}${p.required ? "*" : ""}`).join(",") || "-"],
        ["active", (action) => Output.yesNo(action.is_active)],
        ["confirm", (action) => Output.yesNo(action.requires_confirmation)]
      ], listed.actions)
    }))
  })
).pipe(Command.withDescription("List the catalog's actions, active and inactive (* marks a required parameter)"))

const assign = Command.make(
  "assign",
  {
    agent: Flag.String("agent").pipe(Flag.withDescription("The agent (its name or id)")),
    actions: Flag.String("action").pipe(
      Flag.withDescription("An action the agent may run (its name or id); repeatable"),
      Flag.atLeast(1)
    ),
    replace: Flag.Boolean("replace").pipe(
      Flag.withDescription("Give the agent exactly these actions, removing the others (default: add them)"),
      Flag.withDefault(false)
    )
  },
  Effect.fnUntraced(function*({ agent: agentRef, actions: actionRefs, replace }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const agent = yield* Lookup.agent(client, agentRef)
      const catalog = yield* Lookup.actions(client)
      const chosen = yield* Effect.forEach(actionRefs, (ref) => Lookup.action(catalog, ref))
      const ids = [...new Set([...(replace ? [] : agent.action_ids), ...chosen.map((action) => action.id)])]
      const updated = yield* client.api.agentsAdmin.assignActions({
        params: { id: agent.id },
        payload: { action_ids: ids }
      })
      if (json) return yield* Output.json(updated)
      const names = updated.action_ids.map((id) => catalog.find((action) => action.id === id)?.name ?? id)
      yield* Console.log(
        `Agent ${Output.printable(updated.name)} may run: ${names.map(Output.printable).join(", ") || "no actions"}.`
      )
    }))
  })
).pipe(
  Command.withDescription("Let an agent run actions (adds to its actions; --replace sets them)"),
  Command.withExamples([{
    command: "agent-platform actions assign --agent Support --action create_ticket",
    description: "The Support agent may now open tickets in chat"
  }])
)

export const actions = Command.make("actions").pipe(
  Command.withDescription("Create and list the actions agents run, and assign them to agents"),
  Command.withSubcommands([create, list, assign])
)
