/**
 * The service as a process, as `pnpm start` runs it: a bad configuration
 * stops it with one line naming the variable and exit code 1; a second
 * process on the same data directory refuses to start; a restart keeps the
 * data. (Spawns the service's bundle, as `pnpm start` does; see ServiceProcess.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventually } from "./Eventually.ts"
import { type Exited, healthy, logEntries, run, type RunningService, start } from "./ServiceProcess.ts"

describe("the service process", () => {
  it.live(
    "a bad configuration value stops it with one line naming the variable, exit code 1",
    () =>
      Effect.gen(function*() {
        const exited = yield* run({ PORT: "not-a-port", DATA_DIR: join(tmpdir(), "never-created") })
        assert.strictEqual(exited.code, 1)
        const lines = exited.stderr.trim().split("\n")
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0], /^Invalid configuration: .*PORT/)
      }),
    60_000
  )

  it.live(
    "URLs, addresses and keys are checked too: each bad value stops it with one line naming the variable",
    () =>
      Effect.gen(function*() {
        const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bad-config-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        const cases: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
          [{ BOOTSTRAP_ADMIN_EMAIL: "notanemail" }, /^Invalid configuration: BOOTSTRAP_ADMIN_EMAIL must be an email/],
          [{ REDIS_URL: "notaurl" }, /^Invalid configuration: REDIS_URL must be a URL starting with redis:\/\//],
          [{ DATABASE_URL: "notaurl", SESSION_SECRET: "x".repeat(32) }, /^Invalid configuration: DATABASE_URL/],
          [{ CORS_ORIGINS: "https://app.example.com,notaurl" }, /^Invalid configuration: CORS_ORIGINS holds "notaurl"/],
          [{ OPENAI_BASE_URL: "notaurl" }, /^Invalid configuration: OPENAI_BASE_URL/],
          [{ ENCRYPTION_KEY: "short" }, /^Invalid configuration: ENCRYPTION_KEY must be at least 32 characters/],
          [{ TRUST_PROXY: "maybe" }, /^Invalid configuration: .*TRUST_PROXY.*true, false or the number/],
          [{ APP_BASE_URL: "notaurl" }, /^Invalid configuration: .*APP_BASE_URL.*https:\/\//],
          [
            { VAPID_SUBJECT: "foo" },
            /^Invalid configuration: VAPID_SUBJECT must be a mailto: address or an https:\/\/ URL/
          ],
          [{ REDIS_URL: "redis://127.0.0.1:1" }, /^Cannot reach Redis: .*ECONNREFUSED.*Check REDIS_URL/]
        ]
        for (const [env, line] of cases) {
          const exited = yield* run({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: "Process-Test-Passw0rd", ...env })
          const lines = exited.stderr.trim().split("\n")
          assert.strictEqual(exited.code, 1, JSON.stringify(env))
          assert.strictEqual(lines.length, 1, exited.stderr)
          assert.match(lines[0], line)
        }
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("with DATABASE_URL set, a missing SESSION_SECRET stops it with one clear line", () =>
    Effect.gen(function*() {
      const exited = yield* run({ DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", SESSION_SECRET: "" })
      assert.strictEqual(exited.code, 1)
      assert.match(exited.stderr.trim(), /SESSION_SECRET/)
    }), 60_000)

  it.live(
    "a restart keeps the data; a second process on the same DATA_DIR refuses to start",
    () =>
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
      }).pipe(Effect.scoped),
    120_000
  )
})

describe("the request log", () => {
  const requestLines = (service: RunningService) =>
    logEntries(service.stdout()).filter((entry) => entry.message === "request")

  it.live("one JSON line per request at Info; a healthy /health probe only at Debug", () =>
    Effect.gen(function*() {
      for (const level of ["Info", "Debug"] as const) {
        const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-request-log-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        // Ready once /health has answered 200: those probes are already behind it.
        const service = yield* start({
          DATA_DIR: dataDir,
          BOOTSTRAP_ADMIN_PASSWORD: "Request-Log-Passw0rd",
          LOG_LEVEL: level,
          LOG_FORMAT: "json"
        })
        yield* Effect.promise(() => fetch(`${service.url}/v1/agents`).then((response) => response.arrayBuffer()))
        const logged = yield* eventually(
          Effect.sync(() => requestLines(service)),
          (entries) => entries.some((entry) => entry.annotations.path === "/v1/agents")
        )
        const agents = logged.find((entry) => entry.annotations.path === "/v1/agents")!
        assert.strictEqual(agents.level, "INFO")
        assert.deepInclude(agents.annotations, { method: "GET", path: "/v1/agents", status: 401 })
        const probes = logged.filter((entry) => entry.annotations.path === "/health")
        if (level === "Info") assert.lengthOf(probes, 0, "healthy probes stay out of the Info log")
        else {
          assert.isAbove(probes.length, 0)
          for (const probe of probes) assert.deepInclude(probe, { level: "DEBUG", message: "request" })
          assert.deepInclude(probes[0]!.annotations, { method: "GET", status: 200 })
        }
      }
    }).pipe(Effect.scoped), 120_000)
})
