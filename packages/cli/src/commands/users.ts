/** `users create|list`: the users of the signed-in admin's tenant. */
import { Admin, Roles, Session } from "@agent-platform/domain"
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
    email: Flag.String("email").pipe(Flag.withDescription("The user's email address"), Flag.withSchema(Session.Email)),
    name: Flag.String("name").pipe(
      Flag.withDescription("The user's display name"),
      Flag.withSchema(Admin.CreateUser.fields.nombre)
    ),
    role: Flag.Literals("role", Roles).pipe(Flag.withDescription("The user's role")),
    ...PasswordInput.flags("The user's first password")
  },
  Effect.fnUntraced(function*({ email, name, role, password: passwordFlag, passwordStdin }) {
    const { json } = yield* root
    const password = yield* PasswordInput.read(
      { password: passwordFlag, passwordStdin },
      { command: "users create", prompt: "Password for the new user" }
    )
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

const list = Command.make(
  "list",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const listed = yield* client.api.admin.listUsers()
      if (json) return yield* Output.json(listed)
      if (listed.users.length === 0) {
        return yield* Console.log(`No users yet: create one with ${yield* Invocation.command("users create")}.`)
      }
      yield* Output.table<Admin.AdminUser>([
        ["id", (user) => user.id],
        ["email", (user) => user.email],
        ["name", (user) => user.nombre],
        ["role", (user) => user.role_id],
        ["active", (user) => Output.yesNo(user.active)],
        ["blocked", (user) => Output.yesNo(user.blocked)],
        ["mfa", (user) => Output.yesNo(user.mfa_enabled)],
        ["last login", (user) => Output.minute(user.last_login_at)],
        ["created", (user) => Output.minute(user.created_at)]
      ], listed.users)
    }))
  })
).pipe(Command.withDescription("List the tenant's users (admin)"))

export const users = Command.make("users").pipe(
  Command.withDescription("Create and list the tenant's users"),
  Command.withSubcommands([create, list])
)
