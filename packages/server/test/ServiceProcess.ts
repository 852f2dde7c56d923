/**
 * The service as a child process, the way `pnpm start` runs it: the esbuild
 * bundle of `src/main.ts` (built once per test process, beside `pnpm start`'s
 * own `dist/main.mjs` so its external packages resolve), for the tests of
 * start-up and shutdown.
 */
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))

/** This test process's bundle of the service, built on first use (serviceBundles.ts deletes it after the run). */
let bundled: string | undefined
const serviceBundle = (): string => {
  if (bundled !== undefined) return bundled
  const outfile = fileURLToPath(new URL(`../dist/main.test-${process.pid}.mjs`, import.meta.url))
  execFileSync(process.execPath, [fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url)), outfile])
  bundled = outfile
  return outfile
}

export interface Exited {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The test runner's environment without the service's own settings: each test picks its own. */
const inherited = Object.fromEntries(
  Object.entries(process.env).filter(([name]) =>
    !["DATABASE_URL", "REDIS_URL", "SESSION_SECRET", "DATA_DIR", "ROLE", "PORT", "HOST"].includes(name) &&
    !name.startsWith("BOOTSTRAP_")
  )
)

/** A port nothing listens on (free when asked; the OS may hand it out again later). */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

/**
 * Starts the service on a free port of 127.0.0.1 (unless `env` names one);
 * `until` is asked every 100 ms, with the service's URL and its output so far,
 * whether to stop waiting (then it is sent SIGTERM); without it the service
 * runs until it exits.
 */
export const run = (env: Record<string, string>, until?: (url: string, stdout: string) => Promise<boolean>) =>
  Effect.promise(() =>
    new Promise<Exited & { readonly sawReady: boolean }>((resolve) => {
      void freePort().then((free) => {
        const port = env.PORT ?? String(free)
        const child = spawn(process.execPath, [serviceBundle()], {
          cwd: repoRoot,
          env: { ...inherited, PORT: port, HOST: "127.0.0.1", LOG_LEVEL: "Error", ...env },
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
            if (await until(`http://127.0.0.1:${port}`, stdout).catch(() => false)) {
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

/** One line of the service's JSON log (`LOG_FORMAT=json`). */
export interface LogEntry {
  readonly message: string
  readonly level: string
  readonly annotations: Readonly<Record<string, unknown>>
}

/**
 * The JSON log entries in a service's output so far. Lines that are not
 * JSON are left out, and so is a last line still being written.
 */
export const logEntries = (stdout: string): ReadonlyArray<LogEntry> =>
  stdout.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return []
    try {
      return [JSON.parse(line) as LogEntry]
    } catch {
      return []
    }
  })

/** Whether the service at `url` answers /health with 200. */
export const healthy = (url: string) =>
  fetch(`${url}/health`).then(async (r) => (await r.arrayBuffer(), r.status === 200))

/** A service process started by {@link start}, running until its scope closes. */
export interface RunningService {
  /** `http://127.0.0.1:<port>` (nothing listens there for ROLE=jobs). */
  readonly url: string
  readonly pid: number
  /** What it printed so far. */
  readonly stdout: () => string
  readonly stderr: () => string
}

/**
 * Starts the service and waits until it is ready: `/health` answers 200, or
 * for ROLE=jobs (no port) it has logged its role (so give it LOG_LEVEL=Info).
 * It is sent SIGTERM when the scope closes, and SIGKILL if it has not exited
 * 15 s later; dies with its output when it exits or is not ready within 90 s.
 */
export const start = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const port = env.PORT ?? String(await freePort())
      const child = spawn(process.execPath, [serviceBundle()], {
        cwd: repoRoot,
        env: { ...inherited, PORT: port, HOST: "127.0.0.1", LOG_LEVEL: "Error", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      return {
        child,
        service: {
          url: `http://127.0.0.1:${port}`,
          pid: child.pid!,
          stdout: () => stdout,
          stderr: () => stderr
        } satisfies RunningService
      }
    }),
    ({ child }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          const kill = setTimeout(() => child.kill("SIGKILL"), 15_000)
          child.once("exit", () => {
            clearTimeout(kill)
            resolve()
          })
          child.kill("SIGTERM")
        })
      )
  ).pipe(
    Effect.flatMap(({ child, service }) =>
      Effect.promise(async () => {
        const deadline = Date.now() + 90_000
        for (;;) {
          if (child.exitCode !== null) {
            throw new Error(`the service exited with ${child.exitCode}: ${service.stderr()}${service.stdout()}`)
          }
          const ready = env.ROLE === "jobs"
            ? service.stdout().includes("role jobs")
            : await healthy(service.url).catch(() => false)
          if (ready) return service
          if (Date.now() > deadline) throw new Error(`the service was not ready within 90 s: ${service.stderr()}`)
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      })
    )
  )
