/** `agents create|list|show`: the agents of the tenant's spaces (admin, or a Space Admin for their spaces). */
import { AgentAdmin } from "@agent-platform/domain"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Invocation from "../Invocation.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const spaceFlag = (description: string) =>
  Flag.String("space").pipe(Flag.withDescription(`${description} (its code or id)`))

const create = Command.make(
  "create",
  {
    space: spaceFlag("The space the agent works in"),
    name: Flag.String("name").pipe(
      Flag.withDescription("The agent's name"),
      Flag.withSchema(AgentAdmin.CreateAgent.fields.name)
    ),
    summary: Flag.String("summary").pipe(
      Flag.withDescription("What the agent knows and does: chat routes questions to the agent whose summary fits"),
      Flag.withSchema(AgentAdmin.CreateAgent.fields.summary)
    ),
    primary: Flag.Boolean("primary").pipe(
      Flag.withDescription(
        "Make it the space's primary agent, which answers what no other agent fits (unsets the old one)"
      ),
      Flag.withDefault(false)
    ),
    alwaysOn: Flag.Boolean("always-on").pipe(
      Flag.withDescription("Keep the agent in every chat of the space"),
      Flag.withDefault(false)
    ),
    instructions: Flag.String("instructions").pipe(
      Flag.withDescription(
        "Instructions for the language model (a configured provider; the embedded model ignores them)"
      ),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ space, name, summary, primary, alwaysOn, instructions }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const { id: spaceId } = yield* Lookup.space(client, space)
      const agent = yield* client.api.agentsAdmin.create({
        payload: {
          space_id: spaceId,
          name,
          summary,
          is_primary: primary,
          always_on: alwaysOn,
          ...(Option.isSome(instructions) ? { instructions: instructions.value } : {})
        }
      })
      if (json) return yield* Output.json(agent)
      yield* Console.log(
        `Created agent ${Output.printable(agent.name)}${
          agent.is_primary ? " (primary)" : ""
        } in space ${agent.space_code}, id ${agent.id}.`
      )
    }))
  })
).pipe(
  Command.withDescription("Create an agent in a space"),
  Command.withExamples([{
    command:
      "agent-platform agents create --space support --name Support --summary \"Orders, returns and refunds\" --primary",
    description: "The support space's primary agent"
  }])
)

const list = Command.make(
  "list",
  { space: spaceFlag("Only the agents of this space").pipe(Flag.optional) },
  Effect.fnUntraced(function*({ space }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const spaceId = Option.isSome(space) ? (yield* Lookup.space(client, space.value)).id : undefined
      const listed = yield* client.api.agentsAdmin.list({ query: spaceId === undefined ? {} : { space_id: spaceId } })
      if (json) return yield* Output.json(listed)
      if (listed.agents.length === 0) {
        return yield* Console.log(`No agents yet: create one with ${yield* Invocation.command("agents create")}.`)
      }
      yield* Output.table<AgentAdmin.AdminAgent>([
        ["id", (agent) => agent.id],
        ["name", (agent) => agent.name],
        ["space", (agent) => agent.space_code],
        ["primary", (agent) => Output.yesNo(agent.is_primary)],
        ["always on", (agent) => Output.yesNo(agent.always_on)],
        ["actions", (agent) => String(agent.action_ids.length)],
        ["created", (agent) => Output.minute(agent.created_at)]
      ], listed.agents)
    }))
  })
).pipe(Command.withDescription("List the agents (a Space Admin sees those of their spaces)"))

const show = Command.make(
  "show",
  { agent: Argument.String("agent").pipe(Argument.withDescription("The agent's name or id")) },
  Effect.fnUntraced(function*({ agent: ref }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const agent = yield* Lookup.agent(client, ref)
      if (json) return yield* Output.json(agent)
      yield* Output.fields([
        ["id", agent.id],
        ["name", agent.name],
        ["space", `${agent.space_code} (${agent.space_id})`],
        ["summary", agent.summary],
        ["primary", Output.yesNo(agent.is_primary)],
        ["always on", Output.yesNo(agent.always_on)],
        ["instructions", Output.orDash(agent.instructions)],
        ["actions", agent.action_ids.length === 0 ? "-" : agent.action_ids.join(", ")],
        ["created", Output.minute(agent.created_at)]
      ])
    }))
  })
).pipe(Command.withDescription("Show an agent: its space, summary, instructions and actions"))

export const agents = Command.make("agents").pipe(
  Command.withDescription("Create, list and show agents"),
  Command.withSubcommands([create, list, show])
)
