/**
 * `scim token create`: the API key an identity provider (Okta, Microsoft
 * Entra ID) provisions with, printed once together with the SCIM base URL
 * to paste into the provider's provisioning settings.
 */
import { Keys } from "@agent-platform/domain"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const create = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(
      Flag.withDescription("What the token is for, e.g. the identity provider's name (default: \"SCIM provisioning\")"),
      Flag.withSchema(Keys.CreateApiKey.fields.name),
      Flag.optional
    ),
    rpm: Flag.Int("rpm").pipe(
      Flag.withDescription("Requests per minute allowed to the token (default 300, the limit of SCIM calls)"),
      Flag.withSchema(Keys.CreateApiKey.fields.rate_limit_rpm.schema),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ name, rpm }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client, url }) {
      const created = yield* client.api.keys.create({
        payload: {
          name: Option.getOrElse(name, () => "SCIM provisioning"),
          scopes: ["scim"],
          ...(Option.isSome(rpm) ? { rate_limit_rpm: rpm.value } : {})
        }
      })
      const baseUrl = `${url}/v1/scim`
      if (json) return yield* Output.json({ ...created, base_url: baseUrl })
      yield* Console.log(`Created SCIM token ${created.id} (${created.prefix}), with the scope scim.`)
      yield* Console.log("")
      yield* Console.log(`  SCIM base URL:  ${baseUrl}`)
      yield* Console.log(`  Token:          ${created.key}`)
      yield* Console.log("")
      yield* Console.log("Okta: SCIM connector base URL = the base URL, unique identifier field = userName,")
      yield* Console.log("      authentication mode = HTTP Header, Authorization = Bearer <token>.")
      yield* Console.log("Microsoft Entra ID: Tenant URL = the base URL, Secret Token = the token.")
      yield* Console.log("")
      yield* Console.log("Store the token now: this is the only time it is shown; it cannot be retrieved again.")
    }))
  })
).pipe(
  Command.withDescription("Create an API key with the scim scope and print it once, with the SCIM base URL"),
  Command.withExamples([{
    command: "agent-platform scim token create --name okta",
    description: "A token for Okta's provisioning"
  }])
)

const token = Command.make("token").pipe(
  Command.withDescription("Tokens for identity providers' SCIM provisioning"),
  Command.withSubcommands([create])
)

export const scim = Command.make("scim").pipe(
  Command.withDescription("SCIM 2.0 provisioning from Okta or Microsoft Entra ID"),
  Command.withSubcommands([token])
)
