/**
 * The `agent-platform` CLI for the CLI's tests: the same program `main.ts`
 * runs, run in the test's process with its own arguments, environment,
 * standard input and output, and the exit code `NodeRuntime.runMain` would
 * give. (Spawning a process per command made the CLI tests most of the
 * suite's time; `Bundle.test.ts` runs the built binary as a real process.)
 *
 * A command sees the run's environment through effect's `Config` (and its
 * input and output through `Stdio` and `Console`), never `process.env` or
 * `process.stdout` directly — as every command should read them anyway.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, ConfigProvider, Console, Effect, Layer, Runtime, Sink, Stdio, Stream, Terminal } from "effect"
import { TerminalCapabilities } from "effect/cli"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { format } from "node:util"
import { program } from "../src/Program.ts"

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A directory for the test's files, deleted when the test ends. */
export const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "agent-platform-cli-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/**
 * The environment of a CLI run: the caller's, without anything that would
 * pick a URL, a session file, an API key or an invocation for it, plus `env`.
 */
const environment = (env: Record<string, string>): Record<string, string> => {
  const base: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("npm_")) base[name] = value
  }
  for (
    const name of [
      "AGENT_PLATFORM_URL",
      "AGENT_PLATFORM_CONFIG",
      "AGENT_PLATFORM_API_KEY",
      "XDG_CONFIG_HOME",
      "NODE_OPTIONS"
    ]
  ) {
    delete base[name]
  }
  return { ...base, NO_COLOR: "1", ...env }
}

/** Text written to a stream of the run, as it arrives. */
class Captured {
  text = ""
  readonly decoder = new TextDecoder()
  readonly append = (chunk: string | Uint8Array) => {
    this.text += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true })
  }
  readonly line = (...args: ReadonlyArray<unknown>) => this.append(`${format(...args)}\n`)
  readonly sink = () => Sink.forEach((chunk: string | Uint8Array) => Effect.sync(() => this.append(chunk)))
}

export interface RunOptions {
  /** Standard input, then its end; none (as from /dev/null) when omitted. */
  readonly stdin?: string
  /** A terminal to prompt on; without one, the run cannot prompt (as when piped). */
  readonly terminal?: Terminal.Terminal
}

/**
 * Runs the CLI with `args`; never fails: the exit code and both outputs are
 * the result. `env` is added to the environment (see `environment`).
 */
export const run = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: RunOptions = {}
): Effect.Effect<Run> =>
  Effect.gen(function*() {
    const stdout = new Captured()
    const stderr = new Captured()
    const stdio = Stdio.make({
      args: Effect.succeed(args),
      stdin: options.stdin === undefined ? Stream.empty : Stream.make(new TextEncoder().encode(options.stdin)),
      stdout: () => stdout.sink(),
      stderr: () => stderr.sink(),
      stdinIsTerminal: Effect.succeed(options.terminal !== undefined),
      stdoutIsTerminal: Effect.succeed(options.terminal !== undefined),
      stderrIsTerminal: Effect.succeed(false)
    })
    // The console of the run: `log` and `info` to its stdout, `error`, `warn`, `debug` and `trace` to its stderr.
    const console: Console.Console = {
      ...globalThis.console,
      log: stdout.line,
      info: stdout.line,
      error: stderr.line,
      warn: stderr.line,
      debug: stderr.line,
      trace: stderr.line
    }
    const platform = Layer.mergeAll(
      Layer.succeed(Stdio.Stdio, stdio),
      options.terminal === undefined ? Layer.empty : Layer.succeed(Terminal.Terminal, options.terminal),
      ConfigProvider.layer(ConfigProvider.fromEnv({ env: environment(env) }))
    ).pipe(Layer.provideMerge(NodeServices.layer))
    const exit = yield* program.pipe(
      Effect.provide(platform),
      Effect.provideService(Console.Console, console),
      Effect.provideService(TerminalCapabilities.TerminalCapabilities, {
        canColor: false,
        canAnimate: false,
        canPrompt: options.terminal !== undefined
      }),
      Effect.exit
    )
    // What `NodeRuntime.runMain` does with the end of the program: the exit code, and a report of what was not reported.
    let code = 0
    Runtime.defaultTeardown(exit, (exitCode) => (code = exitCode))
    if (exit._tag === "Failure" && Runtime.getErrorReported(Cause.squash(exit.cause))) {
      stderr.append(`${Cause.pretty(exit.cause)}\n`)
    }
    return { code, stdout: stdout.text, stderr: stderr.text } satisfies Run
  })
