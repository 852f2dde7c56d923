/**
 * What the benches share: starting the service as a child process exactly as
 * `pnpm start` does (the bundled server), waiting until it is healthy, and
 * printing figures.
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { createClient } from "redis"
import { makePromiseClient } from "../packages/sdk/src/index.ts"

export const repoRoot = fileURLToPath(new URL("..", import.meta.url))

/** A free TCP port on loopback. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(
        () => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
      )
    })
  })

export interface Service {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

let bundled: Promise<unknown> | undefined

/** Where a bench's `node --cpu-prof` writes its profile. */
export interface ProfileDirectory {
  readonly path: string
  /** Named by BENCH_PROFILE_DIR: the profile is kept there after the bench. */
  readonly kept: boolean
  /**
   * This run's profile file, once the profiled process has exited: node names
   * its files by date and time, so the last in order (a kept directory may
   * hold earlier runs').
   */
  readonly latest: () => string | undefined
  /** Removes a temporary directory; a kept one stays. */
  readonly done: () => void
}

/** BENCH_PROFILE_DIR (created if missing, kept), else a new temporary directory, removed by `done`. */
export const profileDirectory = (): ProfileDirectory => {
  const named = process.env.BENCH_PROFILE_DIR
  const kept = named !== undefined && named !== ""
  const path = kept ? named : mkdtempSync(join(tmpdir(), "agent-platform-bench-profile-"))
  if (kept) mkdirSync(path, { recursive: true })
  return {
    path,
    kept,
    latest: () => {
      const file = readdirSync(path).filter((name) => name.endsWith(".cpuprofile")).sort().at(-1)
      return file === undefined ? undefined : join(path, file)
    },
    done: () => {
      if (!kept) rmSync(path, { recursive: true, force: true })
    }
  }
}

/** Builds the bundle `pnpm start` runs (packages/server/dist/main.mjs), once per bench process. */
export const ensureBundle = () => (bundled ??= import("../packages/server/scripts/bundle.mjs").then((m) => m.bundle()))

/** The last `bytes` of a file, for an error message. */
const tail = (path: string, bytes = 8192) => {
  const text = readFileSync(path, "utf8")
  return text.slice(Math.max(0, text.length - bytes))
}

export interface StartOptions {
  /** Flags for node before the script (e.g. `--cpu-prof`). */
  readonly nodeArgs?: ReadonlyArray<string>
  /** A bundle of the service to run instead of this checkout's (built first): another build to compare. */
  readonly bundle?: string
}

/** Flags for node from an environment variable, space-separated. */
export const nodeArgsFrom = (name: string): ReadonlyArray<string> =>
  (process.env[name] ?? "").split(" ").filter((arg) => arg !== "")

/** BENCH_NODE_ARGS: flags for node when it runs the service (`--max-semi-space-size=32`, say), in every bench. */
const nodeArgsFromEnv = nodeArgsFrom("BENCH_NODE_ARGS")

/**
 * BENCH_KEEP_LOGS=1: keep each service's log file after it stops (its path is
 * printed then). Else it is removed with its directory: at the default level a
 * bench's request log runs to a hundred MB or more.
 */
const keepLogs = process.env.BENCH_KEEP_LOGS === "1"

/**
 * Starts the service as `pnpm start` does (the bundle, built first) with
 * `env` on top of the defaults — `LOG_LEVEL` included, so the request log
 * costs what it costs a user — and resolves once GET /health answers 200,
 * with the time it took from spawning the process. Its output goes to a log
 * file (`logFile`), as a supervisor would collect it; `stop` removes it
 * (BENCH_KEEP_LOGS=1 keeps it). A service that exits or never gets healthy
 * is reported with the log's last lines.
 */
export const startService = async (
  env: Record<string, string>,
  options: StartOptions = {}
): Promise<Service & { readonly healthyAfterMs: number; readonly logFile: string }> => {
  if (options.bundle === undefined) await ensureBundle()
  const port = await freePort()
  const logFile = join(mkdtempSync(join(tmpdir(), "agent-platform-bench-log-")), "service.log")
  const log = openSync(logFile, "a")
  const started = performance.now()
  const child = spawn(process.execPath, [
    ...nodeArgsFromEnv,
    ...(options.nodeArgs ?? []),
    options.bundle ?? "packages/server/dist/main.mjs"
  ], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", log, log]
  })
  closeSync(log)
  /** The error for a service that did not start, with its log's last lines; the process is stopped, the log removed. */
  const giveUp = (what: string) => {
    const error = new Error(`${what}:\n${tail(logFile)}`)
    child.kill("SIGKILL")
    if (!keepLogs) rmSync(dirname(logFile), { recursive: true, force: true })
    return error
  }
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw giveUp(`the service exited (${child.exitCode})`)
    const status = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then(async (r) => {
      await r.arrayBuffer()
      return r.status
    }, () => 0)
    if (status === 200) break
    if (performance.now() - started > 120_000) {
      throw giveUp(`not healthy after 120 s (last status ${status})`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const healthyAfterMs = performance.now() - started
  const stopped = new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
  })
  let stopping: Promise<void> | undefined
  const stop = () =>
    stopping ??= (async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await stopped
      if (keepLogs) console.log(`service log kept: ${logFile}`)
      else rmSync(dirname(logFile), { recursive: true, force: true })
    })()
  return { url, process: child, stop, healthyAfterMs, logFile }
}

/** CPU time (user + system) of a process so far, in ms, from /proc (USER_HZ = 100); 0 once it has exited. */
export const cpuMs = (pid: number): number => {
  const path = `/proc/${pid}/stat`
  if (!existsSync(path)) return 0
  const stat = readFileSync(path, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Resident set size of a process, in MiB (Linux: /proc). */
export const rssMiB = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? Number.NaN : Number(match[1]) / 1024
}

/** Spawns a baseline server script of bench/servers with `env` and waits until PORT answers. */
export const startBaseline = async (script: string, env: Record<string, string> = {}): Promise<Service> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "bench", "servers", script)], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited (${child.exitCode})`)
    if (
      await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.arrayBuffer().then(() => true), () => false)
    ) break
    if (performance.now() - started > 60_000) throw new Error(`${script} did not answer within 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return { url, process: child, stop }
}

/**
 * The bootstrap superadmin of every bench service (set through
 * BOOTSTRAP_ADMIN_PASSWORD); the service creates it before its port opens.
 */
export const benchAdmin = { email: "admin@example.com", password: "Bench-Admin-Passw0rd!" } as const

/** Prints one figure as an aligned line. */
export const report = (label: string, value: string) => console.log(`${label.padEnd(58)} ${value}`)

export const ms = (value: number) => `${value.toFixed(0)} ms`

/**
 * On a freshly started service: a space with three agents, and `keyCount`
 * keys with the `agents:read` scope (rate_limit_rpm 100,000: only the
 * 300/min class limit applies), so that load spread over the keys does the
 * full work of every request without being refused.
 */
export const seedAgentsAndKeys = async (url: string, keyCount: number) => {
  const admin = makePromiseClient({ baseUrl: url })
  const me = await admin.auth.login({ payload: benchAdmin })
  const space = await admin.admin.createSpace({ payload: { code: "bench", name: "Bench" } })
  for (const [name, isPrimary] of [["Support", true], ["Billing", false], ["Onboarding", false]] as const) {
    await admin.agentsAdmin.create({
      payload: { space_id: space.id, name, summary: `${name} questions`, is_primary: isPrimary }
    })
  }
  const keys: Array<{ readonly key: string; readonly id: string }> = []
  let next = 0
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < keyCount) {
      next++
      const created = await admin.keys.create({
        payload: { name: `bench ${next}`, scopes: ["agents:read"], rate_limit_rpm: 100_000 }
      })
      keys.push({ key: created.key, id: created.id })
    }
  }))
  const first = makePromiseClient({ baseUrl: url, apiKey: keys[0].key })
  const { agents } = await first.agents.list({ query: {} })
  await Promise.all([admin.dispose(), first.dispose()])
  return { tenantId: me.tenant_id, keys, agents }
}

/**
 * Creates a new database on the PostgreSQL server at `serverUrl`, named
 * after `purpose`: its URL, and `drop` to remove it afterwards.
 */
export const createBenchDatabase = async (
  serverUrl: string,
  purpose: string
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `ap_bench_${purpose}_${process.pid}_${Date.now()}`
  const onServer = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl })
    await client.connect()
    await client.query(statement)
    await client.end()
  }
  await onServer(`CREATE DATABASE "${name}"`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) }
}

/**
 * Runs `use` with the URL of a new database on the PostgreSQL server at
 * `serverUrl`, named after `purpose`, and a Redis key prefix of its own (see
 * {@link benchRedisPrefix}); drops the database afterwards, and the keys under
 * the prefix on `redisUrl` when given.
 */
export const withBenchDatabase = async <A>(
  serverUrl: string,
  purpose: string,
  use: (url: string, redisPrefix: string) => Promise<A>,
  redisUrl?: string
): Promise<A> => {
  const database = await createBenchDatabase(serverUrl, purpose)
  const redis = benchRedisPrefix(redisUrl, purpose)
  try {
    return await use(database.url, redis.prefix)
  } finally {
    await database.drop()
    await redis.drop()
  }
}

/**
 * A Redis key prefix of this bench process's own, `bench-<purpose>-<pid>:`,
 * and `drop` to delete every key written under it afterwards: the service
 * leaves keys without expiry there (the workers' last cron tick), and a bench
 * must not leave its data on a shared Redis. Without a Redis URL, `drop` does
 * nothing.
 */
export const benchRedisPrefix = (
  redisUrl: string | undefined,
  purpose: string
): { readonly prefix: string; readonly drop: () => Promise<void> } => {
  const prefix = `bench-${purpose}-${process.pid}:`
  const drop = async () => {
    if (redisUrl === undefined || redisUrl === "") return
    const client = createClient({ url: redisUrl })
    await client.connect()
    try {
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
        if (keys.length > 0) await client.unlink(keys)
      }
    } finally {
      await client.close()
    }
  }
  return { prefix, drop }
}

/** What one load run measured. */
export interface LoadResult {
  readonly rps: number
  readonly p99: number
  readonly non2xx: number
  readonly requests: number
}

/** GET `url` with autocannon for `duration` seconds over `connections`, each request with the next of `headers`. */
export const load = (
  url: string,
  headers: ReadonlyArray<Record<string, string>>,
  options: { readonly connections: number; readonly duration: number }
): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    let next = 0
    autocannon({
      url,
      connections: options.connections,
      duration: options.duration,
      requests: [{
        method: "GET",
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, ...headers[next++ % headers.length] }
        })
      }]
    }, (error, result) => {
      if (error) return reject(error)
      resolve({
        rps: result.requests.average,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        requests: result.requests.total
      })
    })
  })

/**
 * A load run, and the CPU time (user + system, from /proc) the serving
 * process spent per request in it (and its companion, when measured).
 */
export type MeasuredLoad = LoadResult & { readonly cpuUs: number; readonly companionCpuUs?: number }

/** {@link load}, with the CPU time per request of the process `pid` that serves it. */
export const measuredLoad = async (
  pid: number,
  url: string,
  headers: ReadonlyArray<Record<string, string>>,
  options: {
    readonly connections: number
    readonly duration: number
    /** Another process serving these requests (the Redis server): its CPU per request too. */
    readonly companionPid?: number | undefined
  }
): Promise<MeasuredLoad> => {
  const companion = options.companionPid
  const before = cpuMs(pid)
  const companionBefore = companion === undefined ? 0 : cpuMs(companion)
  const result = await load(url, headers, options)
  const perRequest = (ms: number) => (ms * 1000) / Math.max(1, result.requests)
  return {
    ...result,
    cpuUs: perRequest(cpuMs(pid) - before),
    ...(companion === undefined ? {} : { companionCpuUs: perRequest(cpuMs(companion) - companionBefore) })
  }
}

/**
 * The process id of the Redis server at `redisUrl` when it runs on this
 * machine (its `/proc` entry is there), so that a bench can read its CPU time;
 * else undefined.
 */
export const localRedisPid = async (redisUrl: string): Promise<number | undefined> => {
  const client = createClient({ url: redisUrl })
  await client.connect()
  try {
    const info = await client.info("server")
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1])
    const host = new URL(redisUrl).hostname
    const loopback = host === "localhost" || host.startsWith("127.") || host === "[::1]"
    return loopback && existsSync(`/proc/${pid}/stat`) ? pid : undefined
  } finally {
    await client.close()
  }
}

/** The middle value (the upper one of an even count). */
export const median = (values: ReadonlyArray<number>) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
