/** `keys create|list|revoke`: the tenant's API keys (a session is required: keys cannot manage keys). */
import { Keys, Scopes } from "@agent-platform/domain"
import { Console, Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Invocation from "../Invocation.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const create = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(
      Flag.withDescription("What the key is for"),
      Flag.withSchema(Keys.CreateApiKey.fields.name)
    ),
    scopes: Flag.Literals("scope", Scopes).pipe(
      Flag.withDescription("A scope the key grants; repeat the flag for several"),
      Flag.atLeast(1)
    ),
    space: Flag.String("space").pipe(
      Flag.withDescription("Bind the key to one space (its code or id): it can then only act on that space's agents"),
      Flag.optional
    ),
    rpm: Flag.Int("rpm").pipe(
      Flag.withDescription("Requests per minute allowed to the key (default 300)"),
      Flag.withSchema(Keys.CreateApiKey.fields.rate_limit_rpm.schema),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ name, scopes, space, rpm }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const spaceId = Option.isSome(space) ? (yield* Lookup.space(client, space.value)).id : undefined
      const created = yield* client.api.keys.create({
        payload: {
          name,
          scopes,
          ...(spaceId === undefined ? {} : { space_id: spaceId }),
          ...(Option.isSome(rpm) ? { rate_limit_rpm: rpm.value } : {})
        }
      })
      if (json) return yield* Output.json(created)
      yield* Console.log(`Created API key ${created.id} (${created.prefix}).`)
      yield* Console.log("")
      yield* Console.log(`  ${created.key}`)
      yield* Console.log("")
      yield* Console.log("Store it now: this is the only time the full key is shown; it cannot be retrieved again.")
    }))
  })
).pipe(
  Command.withDescription("Create an API key and print it once"),
  Command.withExamples([{
    command: "agent-platform keys create --name widget --scope chat --scope agents:read --rpm 120",
    description: "A key for a chat widget, limited to 120 requests a minute"
  }])
)

/** `scopes` is delivered as a JSON-encoded array (spec); shown as a comma-separated list. */
const decodeScopes = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Array(Schema.String)))
const scopeList = (encoded: string): string =>
  Option.match(decodeScopes(encoded), { onNone: () => encoded, onSome: (scopes) => scopes.join(",") })

const list = Command.make(
  "list",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const listed = yield* client.api.keys.list()
      if (json) return yield* Output.json(listed)
      if (listed.keys.length === 0) {
        return yield* Console.log(`No API keys yet: create one with ${yield* Invocation.command("keys create")}.`)
      }
      yield* Output.table<Keys.ApiKeyListItem>([
        ["id", (key) => key.id],
        ["name", (key) => key.name],
        ["prefix", (key) => key.key_prefix],
        ["scopes", (key) => scopeList(key.scopes)],
        ["space", (key) => Output.orDash(key.space_id)],
        ["rpm", (key) => String(key.rate_limit_rpm)],
        ["active", (key) => Output.yesNo(key.is_active)],
        ["last used", (key) => Output.minute(key.last_used_at)],
        ["created", (key) => Output.minute(key.created_at)]
      ], listed.keys)
    }))
  })
).pipe(Command.withDescription("List the tenant's API keys (never the secrets)"))

const revoke = Command.make(
  "revoke",
  { id: Argument.String("id").pipe(Argument.withDescription("The key's id, as `keys list` shows it")) },
  Effect.fnUntraced(function*({ id }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const revoked = yield* client.api.keys.revoke({ params: { id } })
      if (json) return yield* Output.json(revoked)
      yield* Console.log(`${id}: ${revoked.message}`)
    }))
  })
).pipe(Command.withDescription("Revoke an API key: it is refused from the next request on"))

export const keys = Command.make("keys").pipe(
  Command.withDescription("Create, list and revoke API keys"),
  Command.withSubcommands([create, list, revoke])
)
