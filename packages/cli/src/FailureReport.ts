/**
 * How a failed command ends: one line on stderr, `error: <message>`, and exit
 * code 1. The message is the server's own (`error` in every error body of the
 * API) when it sent one — where it names the HTTP route that turns a feature
 * on, the CLI names its own `flags set` command instead.
 *
 * Usage errors take the same one-line form through {@link presenter};
 * `Command.run` sets their exit code (1) itself. The CLI's own messages name
 * commands as the user runs them (`pnpm cli login` from a checkout).
 */
import { Admin } from "@agent-platform/domain"
import { Console, Data, Effect, Predicate, Runtime, Schema } from "effect"
import { CliError, CliOutput } from "effect/cli"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Invocation from "./Invocation.ts"
import { printable } from "./Output.ts"
import * as Transport from "./Transport.ts"

/** A failure already printed; it carries the exit code for `NodeRuntime.runMain`. */
export class ReportedFailure extends Data.TaggedError("ReportedFailure")<{ readonly exitCode: number }> {
  override readonly [Runtime.errorReported] = false
  override get [Runtime.errorExitCode]() {
    return this.exitCode
  }
}

/** An error body of the API: `{ _tag, error }`. */
const serverMessage = (error: unknown): string | undefined =>
  Predicate.hasProperty(error, "error") && Predicate.isString(error.error) ? error.error : undefined

/**
 * An answer the client could not take: a status the endpoint does not declare
 * (a proxy, a crash) or a body that does not match. Its body may still say why.
 */
const describeResponse = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> => {
  const fallback = response.status >= 400
    ? `the server answered HTTP ${response.status}`
    : `unexpected response from the server (HTTP ${response.status})`
  return response.json.pipe(
    Effect.map((body) => serverMessage(body) ?? fallback),
    Effect.orElseSucceed(() => fallback)
  )
}

const describeHttp = (error: HttpClientError.HttpClientError): Effect.Effect<string> => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError":
      return Effect.succeed(
        Transport.timedOut(error)?.message ??
          `cannot reach ${new URL(reason.request.url).origin}: is the service running?`
      )
    case "StatusCodeError":
    case "DecodeError":
    case "EmptyBodyError":
      return describeResponse(reason.response)
    default:
      return Effect.succeed(reason.message)
  }
}

/** The CLI's own message for a failure (naming commands as `agent-platform ...`). */
const ownMessage = (error: unknown): Effect.Effect<string> => {
  if (HttpClientError.isHttpClientError(error)) return describeHttp(error)
  if (Schema.isSchemaError(error)) return Effect.succeed(`unexpected data: ${error.message}`)
  if (Predicate.hasProperty(error, "message") && Predicate.isString(error.message)) return Effect.succeed(error.message)
  return Effect.succeed(String(error))
}

/** The route a refusal of a feature that is off names for turning it on (403 `FeatureDisabled`). */
const flagsRoute = "PUT /api/admin/tenant/flags"

const flagNames = Object.keys(Admin.TenantFlags.fields)

/**
 * The server's message, with the way to turn a feature on named as the CLI
 * command (`flags set feature_x=on`) where the server names its HTTP route.
 */
const inCliTerms = (message: string): Effect.Effect<string> => {
  const route = message.indexOf(flagsRoute)
  const flag = flagNames.find((name) => message.includes(name))
  if (route === -1 || flag === undefined) return Effect.succeed(message)
  return Effect.map(Invocation.command(`flags set ${flag}=on`), (command) => `${message.slice(0, route)}${command}.`)
}

/** The one-line message for a failure: the server's own, or the CLI's naming commands as the user runs them. */
export const messageOf = (error: unknown): Effect.Effect<string> => {
  const fromServer = serverMessage(error)
  if (fromServer !== undefined) return inCliTerms(fromServer)
  return Effect.gen(function*() {
    return Invocation.rename(yield* ownMessage(error), yield* Invocation.Invocation)
  })
}

/** Prints the failure's one line on stderr, for a command that carries on (an interactive chat). */
export const show = (error: unknown): Effect.Effect<void> =>
  messageOf(error).pipe(
    Effect.flatMap((message) => Console.error(`error: ${printable(message.replace(/\s*\n\s*/g, " "))}`))
  )

/**
 * Prints the failure — told apart from "not an Agent Platform server" when
 * the answer was none the API gives — and fails with a {@link ReportedFailure};
 * CLI usage errors pass through untouched.
 */
export const report = (error: unknown): Effect.Effect<never, unknown, HttpClient.HttpClient | Transport.ChosenUrl> =>
  CliError.isCliError(error)
    ? Effect.fail(error)
    : Transport.recognize(error).pipe(
      Effect.flatMap(show),
      Effect.andThen(Effect.fail(new ReportedFailure({ exitCode: 1 })))
    )

/**
 * Presents usage errors like every other failure — one line on stderr naming
 * where the usage is, not the whole help on stdout, which a script reading
 * `--json` output would take for data — and help and version as usual, all
 * naming the command as `invocation`.
 */
export const presenter = (invocation: string): CliOutput.Presenter => ({
  present: (event) => {
    switch (event._tag) {
      case "InvalidInvocation":
        return Console.error(
          `error: ${printable(event.errors.map((error) => error.message).join("; "))} (see \`${
            Invocation.rename(event.commandPath.join(" "), invocation)
          } --help\`)`
        )
      case "Help":
        return CliOutput.defaultPresenter.present({
          ...event,
          helpDoc: Invocation.renameInHelp(event.helpDoc, invocation)
        })
      default:
        return CliOutput.defaultPresenter.present(event)
    }
  }
})
