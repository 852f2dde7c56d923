/**
 * The service as a process, as `pnpm start` runs it: a bad configuration
 * stops it with one line naming the variable and exit code 1; a second
 * process on the same data directory refuses to start; a restart keeps the
 * data. (Spawns `node --import tsx packages/server/src/main.ts`.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))

interface Exited {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The test runner's environment without the service's own storage settings: each test picks its own. */
const inherited = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !["DATABASE_URL", "REDIS_URL", "SESSION_SECRET", "DATA_DIR", "ROLE"].includes(name))
)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

/** Starts the service; `until` decides when to stop waiting (then it is sent SIGTERM), else it runs until it exits. */
const run = (env: Record<string, string>, until?: (url: string) => Promise<boolean>) =>
  Effect.promise(() =>
    new Promise<Exited & { readonly sawReady: boolean }>((resolve) => {
      void freePort().then((port) => {
        const child = spawn(process.execPath, ["--import", "tsx", "packages/server/src/main.ts"], {
          cwd: repoRoot,
          env: { ...inherited, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "Error", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        let sawReady = false
        child.stdout.on("data", (chunk) => (stdout += chunk))
        child.stderr.on("data", (chunk) => (stderr += chunk))
        child.on("exit", (code) => resolve({ code, stdout, stderr, sawReady }))
        if (until !== undefined) {
          const poll = async () => {
            if (child.exitCode !== null) return
            if (await until(`http://127.0.0.1:${port}`).catch(() => false)) {
              sawReady = true
              child.kill("SIGTERM")
              return
            }
            setTimeout(poll, 100)
          }
          void poll()
        }
      })
    })
  )

const healthy = (url: string) => fetch(`${url}/health`).then(async (r) => (await r.arrayBuffer(), r.status === 200))

describe("the service process", () => {
  it.live("a bad configuration value stops it with one line naming the variable, exit code 1", () =>
    Effect.gen(function*() {
      const exited = yield* run({ PORT: "not-a-port", DATA_DIR: join(tmpdir(), "never-created") })
      assert.strictEqual(exited.code, 1)
      const lines = exited.stderr.trim().split("\n")
      assert.strictEqual(lines.length, 1)
      assert.match(lines[0], /^Invalid configuration: .*PORT/)
    }), 60_000)

  it.live("with DATABASE_URL set, a missing SESSION_SECRET stops it with one clear line", () =>
    Effect.gen(function*() {
      const exited = yield* run({ DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", SESSION_SECRET: "" })
      assert.strictEqual(exited.code, 1)
      assert.match(exited.stderr.trim(), /SESSION_SECRET/)
    }), 60_000)

  it.live("a restart keeps the data; a second process on the same DATA_DIR refuses to start", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-process-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
      const env = { DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: "Process-Test-Passw0rd" }
      let second: Exited | undefined
      const first = yield* run(env, async (url) => {
        if (!(await healthy(url))) return false
        // While the first runs: the same data directory is refused.
        second = await Effect.runPromise(run(env))
        return true
      })
      assert.isTrue(first.sawReady)
      assert.strictEqual(first.code, 0, first.stderr)
      assert.include(first.stdout, "Created tenant \"default\"")
      assert.strictEqual(second?.code, 1)
      assert.match(second!.stderr, /is in use by another process \(pid \d+\)/)

      const restarted = yield* run(env, async (url) => {
        if (!(await healthy(url))) return false
        const login = await fetch(`${url}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "admin@example.com", password: "Process-Test-Passw0rd" })
        })
        return login.status === 200
      })
      assert.isTrue(restarted.sawReady)
      assert.notInclude(restarted.stdout, "Created tenant")
    }).pipe(Effect.scoped), 120_000)
})
