/** `login`, `logout` and `whoami`: the CLI's session with the service. */
import { Session } from "@agent-platform/domain"
import { Console, Effect, Option, Redacted, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as FailureReport from "../FailureReport.ts"
import * as Output from "../Output.ts"
import * as PasswordInput from "../PasswordInput.ts"
import { root } from "../Root.ts"
import * as SessionFile from "../SessionFile.ts"

/** The server answered the login without a session cookie. */
export class NoSessionIssued extends Schema.TaggedError<NoSessionIssued>()("NoSessionIssued", {
  message: Schema.String
}) {}

export const login = Command.make(
  "login",
  {
    email: Flag.String("email").pipe(Flag.withDescription("Your email address"), Flag.withSchema(Session.Email)),
    ...PasswordInput.flags("Your password"),
    totp: Flag.String("totp").pipe(
      Flag.withDescription("The 6-digit code of your authenticator app, once MFA is enabled"),
      Flag.withSchema(Session.LoginRequest.fields.totp_code.schema),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ email, password: passwordFlag, passwordStdin, totp }) {
    const { json } = yield* root
    const password = yield* PasswordInput.read({ password: passwordFlag, passwordStdin }, {
      command: "login",
      prompt: "Password"
    })
    const { url, client } = yield* Connection.anonymous
    const session = yield* client.api.auth.login({
      payload: {
        email,
        password: Redacted.value(password),
        ...(Option.isSome(totp) ? { totp_code: totp.value } : {})
      }
    })
    const sessionToken = yield* client.sessionToken
    if (sessionToken === undefined) {
      return yield* new NoSessionIssued({ message: `${url} signed you in but set no session cookie` })
    }
    const file = yield* SessionFile.write({ url, sessionToken, email: session.email })
    if (json) return yield* Output.json(session)
    yield* Console.log(`Signed in to ${url} as ${Output.printable(session.email)} (${session.role_id}).`)
    yield* Console.log(`Session stored in ${file}.`)
  })
).pipe(
  Command.withDescription("Sign in and store the session for the following commands"),
  Command.withExamples([
    {
      command: "agent-platform --url https://agents.example.com login --email me@example.com",
      description: "Sign in, prompting for the password"
    },
    {
      command: "printf '%s' \"$PASSWORD\" | agent-platform login --email me@example.com --password-stdin",
      description: "Sign in from a script"
    }
  ])
)

export const logout = Command.make(
  "logout",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    const { url, client } = yield* Connection.signedIn
    const result = yield* client.api.auth.logout().pipe(
      // A session the server no longer knows (expired, revoked) is as good as signed out.
      Effect.catchTag(
        "Unauthenticated",
        () => Effect.succeed({ success: true, message: "The session had already ended." })
      ),
      // Signing out of this machine must not depend on the service: the stored session goes all the same.
      Effect.catch((error) =>
        Effect.gen(function*() {
          const why = yield* FailureReport.messageOf(error)
          yield* Console.error(
            `warning: the session could not be ended on the server (${
              Output.printable(why)
            }); it stays valid there until it expires`
          )
          return { success: false, message: `Deleted the stored session only: ${why}` }
        })
      )
    )
    yield* SessionFile.remove
    if (json) return yield* Output.json(result)
    yield* Console.log(result.success ? `Signed out of ${url}.` : `Signed out of ${url} on this machine only.`)
  })
).pipe(
  Command.withDescription(
    "End the session on the server and delete it from this machine (deleted even when the server cannot be reached)"
  )
)

export const whoami = Command.make(
  "whoami",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ url, client }) {
      const session = yield* client.api.auth.me()
      if (json) return yield* Output.json(session)
      yield* Output.fields([
        ["email", session.email],
        ["name", session.nombre],
        ["role", session.role_id],
        ["tenant", session.tenant_id],
        ["user", session.user_id],
        ["server", url]
      ])
    }))
  })
).pipe(Command.withDescription("Show who the stored session belongs to: email, role and tenant"))
