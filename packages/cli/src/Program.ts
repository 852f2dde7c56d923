/**
 * One run of the CLI: the arguments of `Stdio`, the command they name, and
 * its failure reported in one line. `main.ts` runs it as a process; the tests
 * run it in-process with their own `Stdio`, console and environment.
 */
import { Effect, Layer, Option, Ref } from "effect"
import { CliOutput, Command } from "effect/cli"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { cli, version } from "./Cli.ts"
import * as FailureReport from "./FailureReport.ts"
import * as Invocation from "./Invocation.ts"
import * as Transport from "./Transport.ts"

/** Runs the command named by the arguments; needs the platform's services (file system, path, terminal, stdio). */
export const program = Effect.gen(function*() {
  const invocation = yield* Invocation.fromEnvironment
  const chosenUrl = yield* Ref.make(Option.none<string>())
  return yield* cli.pipe(
    Command.run({ version }),
    Effect.catch(FailureReport.report),
    Effect.provide(
      Layer.mergeAll(CliOutput.layerPresenter(FailureReport.presenter(invocation)), FetchHttpClient.layer)
    ),
    Effect.provideService(Transport.ChosenUrl, chosenUrl),
    Effect.provideService(Invocation.Invocation, invocation)
  )
})
