/** The admin CLI: `pnpm cli <command>` from the repository root. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { health } from "./commands/health.ts"
import { root } from "./Root.ts"

root.pipe(
  Command.withSubcommands([health]),
  Command.run({ version: "5.25.0" }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
