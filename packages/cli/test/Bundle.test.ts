/**
 * The installed `agent-platform` binary: the bundle scripts/bundle.mjs builds,
 * copied outside the workspace with only its own dependency beside it, and run as a
 * real process on plain Node — arguments, standard input, output and exit
 * codes as a shell sees them.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  adminEmail,
  adminPassword,
  layer as testServer,
  serverSuite,
  TestServer
} from "../../server/test/TestServer.ts"
import { type Run, temporaryDirectory } from "./CliProcess.ts"

const bundleScript = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))

/** The binary, built into a directory of its own outside the workspace. */
const binary = Effect.gen(function*() {
  const dir = yield* temporaryDirectory
  const file = join(dir, "agent-platform.mjs")
  yield* Effect.sync(() => {
    execFileSync(process.execPath, [bundleScript, file])
    // The package's one dependency (the embedded database, for `security reset-allowlist`), where `npm install` puts it.
    mkdirSync(join(dir, "node_modules"))
    symlinkSync(
      fileURLToPath(new URL("../node_modules/@electric-sql", import.meta.url)),
      join(dir, "node_modules", "@electric-sql")
    )
  })
  return { dir, file }
})

/** Runs the binary as a process in `cwd`, with a clean environment plus `env`. */
const exec = (file: string, cwd: string, args: ReadonlyArray<string>, env: Record<string, string>, stdin?: string) =>
  Effect.callback<Run>((resume) => {
    const child = spawn(file, args, {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: cwd, NO_COLOR: "1", ...env },
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    if (stdin !== undefined) child.stdin?.end(stdin)
    return Effect.sync(() => child.kill())
  })

layer(testServer(), serverSuite)("the agent-platform binary", (it) => {
  it.effect("runs from outside the workspace on plain Node: version, login from stdin, whoami, exit codes", () =>
    Effect.gen(function*() {
      const { dir, file } = yield* binary
      const { baseUrl } = yield* TestServer
      const env = { AGENT_PLATFORM_URL: baseUrl, AGENT_PLATFORM_CONFIG: join(dir, "config.json") }
      const version = yield* exec(file, dir, ["--version"], env)
      assert.strictEqual(version.code, 0, version.stderr)
      assert.strictEqual(version.stdout, "agent-platform v5.25.0\n")

      const anonymous = yield* exec(file, dir, ["whoami"], env)
      assert.strictEqual(anonymous.code, 1)
      assert.strictEqual(anonymous.stderr, "error: not signed in: run `agent-platform login`\n")

      const login = yield* exec(
        file,
        dir,
        ["login", "--email", adminEmail, "--password-stdin"],
        env,
        `${adminPassword}\n`
      )
      assert.strictEqual(login.code, 0, login.stderr)
      const whoami = yield* exec(file, dir, ["--json", "whoami"], env)
      assert.strictEqual(whoami.code, 0, whoami.stderr)
      assert.strictEqual(JSON.parse(whoami.stdout).email, adminEmail)

      const usage = yield* exec(file, dir, ["spaces", "create"], env)
      assert.strictEqual(usage.code, 1)
      assert.match(
        usage.stderr,
        /^error: Missing required flag: --code.*\(see `agent-platform spaces create --help`\)\n$/
      )
    }))
})
