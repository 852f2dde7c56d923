/**
 * What the benches share: starting the service as a child process exactly as
 * `pnpm start` does (the bundled server), waiting until it is healthy, and
 * printing figures.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("..", import.meta.url))

/** A free TCP port on loopback. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

export interface Service {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

let bundled: Promise<unknown> | undefined

/** Builds the bundle `pnpm start` runs (packages/server/dist/main.mjs), once per bench process. */
export const ensureBundle = () => (bundled ??= import("../packages/server/scripts/bundle.mjs").then((m) => m.bundle()))

/**
 * Starts the service as `pnpm start` does (the bundle, built first) with
 * `env`, and resolves once GET /health answers 200, with the time it took
 * from spawning the process.
 */
export const startService = async (env: Record<string, string>): Promise<Service & { readonly healthyAfterMs: number }> => {
  await ensureBundle()
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, ["packages/server/dist/main.mjs"], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "Warn", ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk) => (output += chunk))
  child.stderr?.on("data", (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}):\n${output}`)
    const status = await fetch(`${url}/health`).then(async (r) => {
      await r.arrayBuffer()
      return r.status
    }, () => 0)
    if (status === 200) break
    if (performance.now() - started > 120_000) throw new Error(`not healthy after 120 s (last status ${status}):\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const healthyAfterMs = performance.now() - started
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return { url, process: child, stop, healthyAfterMs }
}

/**
 * The bootstrap superadmin of every bench service (set through
 * BOOTSTRAP_ADMIN_PASSWORD); the service creates it before its port opens.
 */
export const benchAdmin = { email: "admin@example.com", password: "Bench-Admin-Passw0rd!" } as const

/** Prints one figure as an aligned line. */
export const report = (label: string, value: string) => console.log(`${label.padEnd(58)} ${value}`)

export const ms = (value: number) => `${value.toFixed(0)} ms`
