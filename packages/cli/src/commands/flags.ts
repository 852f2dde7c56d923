/** `flags get|set`: the tenant's feature flags (admin). */
import { Admin } from "@agent-platform/domain"
import { Effect, Schema, SchemaTransformation } from "effect"
import { Argument, Command } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

type FlagName = keyof Admin.TenantFlags

const flagNames = Object.keys(Admin.TenantFlags.fields) as ReadonlyArray<FlagName>

const show = (flags: Admin.TenantFlags) =>
  Output.fields(flagNames.map((name) => [name, flags[name] ? "on" : "off"] as const))

const get = Command.make(
  "get",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    const flags = yield* Connection.withSession(({ client }) => client.api.admin.getFlags())
    if (json) return yield* Output.json(flags)
    yield* show(flags)
  })
).pipe(Command.withDescription("Show the tenant's feature flags"))

/** What a flag can be set to. */
const switchWords = { on: true, off: false, true: true, false: false, yes: true, no: false } as const
type SwitchWord = keyof typeof switchWords

/** `name=on` (or off, true, false, yes, no). */
const Assignment = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Struct({
      name: Schema.Literals(flagNames),
      value: Schema.Literals(Object.keys(switchWords) as ReadonlyArray<SwitchWord>)
    }),
    SchemaTransformation.transform({
      decode: (text: string) => {
        const [name, value = ""] = text.split("=", 2)
        return { name: name as FlagName, value: value.toLowerCase() as SwitchWord }
      },
      encode: ({ name, value }) => `${name}=${value}`
    })
  )
)

/** What is wrong with an assignment that does not decode: the flag's name, or its state. */
const whyNotAssignment = (text: string): string => {
  const [name] = text.split("=", 1)
  return (flagNames as ReadonlyArray<string>).includes(name)
    ? `${name} is on or off (or true, false, yes, no)`
    : `a flag name, one of ${flagNames.join(", ")}`
}

const set = Command.make(
  "set",
  {
    assignments: Argument.String("flag=on|off").pipe(
      Argument.withDescription(`A flag and its new state, e.g. feature_war_rooms=on; flags: ${flagNames.join(", ")}`),
      Argument.filterMap(Schema.decodeUnknownOption(Assignment), whyNotAssignment),
      Argument.atLeast(1)
    )
  },
  Effect.fnUntraced(function*({ assignments }) {
    const { json } = yield* root
    const payload: Partial<Record<FlagName, boolean>> = {}
    for (const { name, value } of assignments) payload[name] = switchWords[value]
    const flags = yield* Connection.withSession(({ client }) => client.api.admin.updateFlags({ payload }))
    if (json) return yield* Output.json(flags)
    yield* show(flags)
  })
).pipe(
  Command.withDescription("Turn feature flags on or off; the others keep their state"),
  Command.withExamples([{
    command: "agent-platform flags set feature_war_rooms=on feature_compliance_pack=off",
    description: "Turn war rooms on and the compliance pack off"
  }])
)

export const flags = Command.make("flags").pipe(
  Command.withDescription("Show and set the tenant's feature flags (admin)"),
  Command.withSubcommands([get, set])
)
