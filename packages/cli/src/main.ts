/**
 * The `agent-platform` CLI as a process: `pnpm cli <command>` from the
 * repository root, or the `agent-platform` binary built from this file
 * (`packages/cli/dist/agent-platform.mjs`, see scripts/bundle.mjs).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { program } from "./Program.ts"

program.pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain)
