/**
 * The `agent-platform` CLI as a child process (`node --import tsx
 * packages/cli/src/main.ts ...`), the way a user runs it: for the CLI's tests.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url))
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

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
 * pick a URL, a session file or an API key for it, plus `env`.
 */
const environment = (env: Record<string, string>): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
  for (const name of ["AGENT_PLATFORM_URL", "AGENT_PLATFORM_CONFIG", "AGENT_PLATFORM_API_KEY", "XDG_CONFIG_HOME", "NODE_OPTIONS"]) {
    delete base[name]
  }
  return { ...base, ...env }
}

/**
 * Runs the CLI with `args`; never fails: the exit code and both outputs are
 * the result. Standard input is `stdin`, piped and then closed, or none.
 */
export const run = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly stdin?: string } = {}
): Effect.Effect<Run> =>
  Effect.callback<Run>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", main, ...args], {
      cwd: repositoryRoot,
      env: environment(env),
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    if (options.stdin !== undefined) child.stdin?.end(options.stdin)
    return Effect.sync(() => child.kill())
  })
