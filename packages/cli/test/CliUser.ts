/** CLI users for the CLI's tests: each with its own session file, as one user on one machine would have it. */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { adminEmail, adminPassword, TestServer } from "../../server/test/TestServer.ts"
import { run, type RunOptions, temporaryDirectory } from "./CliProcess.ts"

/** A CLI bound to one session file in a temporary directory, pointed at nothing until `--url` or a login. */
export const cliUser = Effect.gen(function*() {
  const dir = yield* temporaryDirectory
  const configFile = join(dir, "config", "agent-platform", "config.json")
  const { baseUrl } = yield* TestServer
  const env = { AGENT_PLATFORM_CONFIG: configFile }
  return {
    dir,
    configFile,
    baseUrl,
    env,
    run: (...args: ReadonlyArray<string>) => run(args, env),
    runWith: (options: RunOptions, ...args: ReadonlyArray<string>) => run(args, env, options),
    /** Runs `--json <args>`, asserts it exits 0 (showing its stderr otherwise) and parses what it printed. */
    runJson: (...args: ReadonlyArray<string>) =>
      Effect.map(run(["--json", ...args], env), (result): any => {
        assert.strictEqual(result.code, 0, result.stderr)
        return JSON.parse(result.stdout)
      }),
    login: (email = adminEmail, password = adminPassword) =>
      run(["--url", baseUrl, "login", "--email", email, "--password-stdin"], env, { stdin: `${password}\n` })
  }
})

/** A CLI user signed in as the bootstrap superadmin. */
export const signedInAdmin = Effect.gen(function*() {
  const user = yield* cliUser
  const login = yield* user.login()
  assert.strictEqual(login.code, 0, login.stderr)
  return user
})

/** The session file's content. */
export const storedSession = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, string>
