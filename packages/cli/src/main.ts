/** The admin CLI: `pnpm cli <command>` from the repository root. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { CliOutput, Command } from "effect/cli"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { cli, version } from "./Cli.ts"
import * as FailureReport from "./FailureReport.ts"

cli.pipe(
  Command.run({ version }),
  Effect.catch(FailureReport.report),
  Effect.provide([NodeServices.layer, FetchHttpClient.layer, CliOutput.layerPresenter(FailureReport.presenter)]),
  NodeRuntime.runMain
)
