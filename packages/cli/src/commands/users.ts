/** `users create`: add a user to the signed-in admin's tenant. */
import { Console, Effect, Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import { Admin, Roles, Session } from "@agent-platform/domain"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"
import { passwordFlag } from "./auth.ts"

const create = Command.make(
  "create",
  {
    email: Flag.String("email").pipe(Flag.withDescription("The user's email address"), Flag.withSchema(Session.Email)),
    name: Flag.String("name").pipe(
      Flag.withDescription("The user's display name"),
      Flag.withSchema(Admin.CreateUser.fields.nombre)
    ),
    role: Flag.Literals("role", Roles).pipe(Flag.withDescription("The user's role")),
    password: passwordFlag("The user's first password", "Password for the new user")
  },
  Effect.fnUntraced(function*({ email, name, role, password }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const user = yield* client.api.admin.createUser({
        payload: { email, nombre: name, role_id: role, password: Redacted.value(password) }
      })
      if (json) return yield* Output.json(user)
      yield* Console.log(`Created user ${Output.printable(user.email)} (${user.role_id}), id ${user.id}.`)
    }))
  })
).pipe(
  Command.withDescription("Create a user (admin)"),
  Command.withExamples([{
    command: "agent-platform users create --email ana@example.com --name Ana --role r_user",
    description: "Create a user, prompting for the password"
  }])
)

export const users = Command.make("users").pipe(
  Command.withDescription("Manage the tenant's users"),
  Command.withSubcommands([create])
)
