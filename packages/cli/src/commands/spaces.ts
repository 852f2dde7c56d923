/** `spaces create|list`: the tenant's spaces, each with its agents, knowledge and keys (admin). */
import { Admin } from "@agent-platform/domain"
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Invocation from "../Invocation.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const create = Command.make(
  "create",
  {
    code: Flag.String("code").pipe(
      Flag.withDescription("Short name for URLs and commands: lowercase letters, digits, - or _ (e.g. support)"),
      Flag.withSchema(Admin.CreateSpace.fields.code)
    ),
    name: Flag.String("name").pipe(Flag.withDescription("Display name"), Flag.withSchema(Admin.CreateSpace.fields.name))
  },
  Effect.fnUntraced(function*({ code, name }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const space = yield* client.api.admin.createSpace({ payload: { code, name } })
      if (json) return yield* Output.json(space)
      yield* Console.log(`Created space ${space.code} (${Output.printable(space.name)}), id ${space.id}.`)
      yield* Console.log(
        `Next: give it an agent with ${yield* Invocation.command(
          `agents create --space ${space.code} --name NAME --summary TEXT --primary`
        )}.`
      )
    }))
  })
).pipe(
  Command.withDescription("Create a space (admin); 409 when the code is taken"),
  Command.withExamples([{
    command: "agent-platform spaces create --code support --name \"Customer support\"",
    description: "A space for the support agents"
  }])
)

const list = Command.make(
  "list",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const listed = yield* client.api.admin.listSpaces()
      if (json) return yield* Output.json(listed)
      if (listed.spaces.length === 0) {
        return yield* Console.log(`No spaces yet: create one with ${yield* Invocation.command("spaces create")}.`)
      }
      yield* Output.table<typeof Admin.Space.Type>([
        ["id", (space) => space.id],
        ["code", (space) => space.code],
        ["name", (space) => space.name]
      ], listed.spaces)
    }))
  })
).pipe(Command.withDescription("List the tenant's spaces"))

export const spaces = Command.make("spaces").pipe(
  Command.withDescription("Create and list spaces: each holds its agents, their knowledge, and the keys bound to it"),
  Command.withSubcommands([create, list])
)
