/** `tenants create`: a new tenant with its first administrator (superadmin). */
import { Admin, Session } from "@agent-platform/domain"
import { Console, Effect, Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Invocation from "../Invocation.ts"
import * as Output from "../Output.ts"
import * as PasswordInput from "../PasswordInput.ts"
import { root } from "../Root.ts"

const create = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(
      Flag.withDescription("The tenant's name"),
      Flag.withSchema(Admin.CreateTenant.fields.name)
    ),
    adminEmail: Flag.String("admin-email").pipe(
      Flag.withDescription("Email of its first administrator (r_admin)"),
      Flag.withSchema(Session.Email)
    ),
    ...PasswordInput.flags("The administrator's first password")
  },
  Effect.fnUntraced(function*({ name, adminEmail, password: passwordFlag, passwordStdin }) {
    const { json } = yield* root
    const password = yield* PasswordInput.read(
      { password: passwordFlag, passwordStdin },
      { command: "tenants create", prompt: "Password for the tenant's administrator" }
    )
    yield* Connection.withSession(Effect.fnUntraced(function*({ url, client }) {
      const tenant = yield* client.api.admin.createTenant({
        payload: { name, admin_email: adminEmail, admin_password: Redacted.value(password) }
      })
      if (json) return yield* Output.json(tenant)
      yield* Console.log(
        `Created tenant ${Output.printable(tenant.name)}, id ${tenant.id}, with administrator ${adminEmail}.`
      )
      yield* Console.log(`They sign in with ${yield* Invocation.command(`--url ${url} login --email ${adminEmail}`)}.`)
    }))
  })
).pipe(
  Command.withDescription("Create a tenant and its first administrator (superadmin); 409 when the email is taken"),
  Command.withExamples([{
    command:
      "printf '%s' \"$PASSWORD\" | agent-platform tenants create --name Acme --admin-email admin@acme.example --password-stdin",
    description: "A tenant for Acme, its administrator's password from standard input"
  }])
)

export const tenants = Command.make("tenants").pipe(
  Command.withDescription("Create tenants (superadmin)"),
  Command.withSubcommands([create])
)
