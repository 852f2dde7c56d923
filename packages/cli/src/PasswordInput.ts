/**
 * How a command takes a password: `--password-stdin` (for scripts: it never
 * shows in the process list or the shell's history), a hidden prompt at a
 * terminal, or `--password`.
 */
import { Effect, Option, Redacted, Schema, Stdio, Stream } from "effect"
import { Flag, Prompt, TerminalCapabilities } from "effect/cli"
import * as Invocation from "./Invocation.ts"

/** No password was given and there is no terminal to ask for one on. */
export class PasswordMissing
  extends Schema.TaggedError<PasswordMissing>()("PasswordMissing", { message: Schema.String })
{}

/** The password flags of a command: `--password` and `--password-stdin`. */
export const flags = (whose: string) => ({
  password: Flag.Redacted("password").pipe(
    Flag.withDescription(
      `${whose} (prompted for, hidden, when omitted at a terminal; prefer --password-stdin in scripts)`
    ),
    Flag.optional
  ),
  passwordStdin: Flag.Boolean("password-stdin").pipe(
    Flag.withDescription(
      `Read ${whose.toLowerCase()} from standard input (everything up to its end, without the final line break)`
    ),
    Flag.withDefault(false)
  )
})

/** Standard input to its end, without one final line break. */
const readStdin = Effect.gen(function*() {
  const stdio = yield* Stdio.Stdio
  const text = yield* stdio.stdin.pipe(Stream.decodeText(), Stream.mkString)
  return text.replace(/\r?\n$/u, "")
})

/**
 * The password, from `--password-stdin`, `--password` or a hidden prompt, in
 * that order; `PasswordMissing` naming both flags when none can be had.
 */
export const read = Effect.fnUntraced(function*(
  input: { readonly password: Option.Option<Redacted.Redacted<string>>; readonly passwordStdin: boolean },
  usage: { readonly command: string; readonly prompt: string }
) {
  const missing = (why: string) =>
    Effect.flatMap(
      Invocation.command(`${usage.command} --help`),
      (help) => Effect.fail(new PasswordMissing({ message: `${why} (see ${help})` }))
    )
  if (input.passwordStdin) {
    if (Option.isSome(input.password)) return yield* missing("pass either --password or --password-stdin, not both")
    const password = yield* readStdin.pipe(Effect.orElseSucceed(() => ""))
    if (password.length === 0) {
      return yield* missing("no password on standard input: pipe it in, e.g. `printf '%s' \"$PASSWORD\" | ...`")
    }
    return Redacted.make(password)
  }
  if (Option.isSome(input.password)) return input.password.value
  const { canPrompt } = yield* TerminalCapabilities.TerminalCapabilities
  if (!canPrompt) return yield* missing("no password: pipe it to --password-stdin, or pass --password")
  const typed = yield* Prompt.run(Prompt.Hidden({
    message: usage.prompt,
    validate: (value) => value.length === 0 ? Effect.fail("the password cannot be empty") : Effect.succeed(value)
  }))
  return Redacted.make(Redacted.value(typed) as string)
})
