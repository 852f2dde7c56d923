/**
 * Webhook deliveries per second to a loopback receiver: how fast the jobs
 * role drains the durable delivery queue (claim with SKIP LOCKED, signed
 * POST, record the outcome), against the receiver's own throughput for the
 * same signed POSTs sent by autocannon with 64 connections (the worker
 * keeps up to 256 deliveries in flight), measured in the same run. The
 * receiver verifies every signature, as a real one must. Also printed: the connections the jobs role opened (keep-alive
 * reuses them) and its CPU time per delivery while draining, a figure the
 * shared machine's load disturbs less than the rate.
 *
 * 1. `ROLE=api`: a fresh tenant gets BENCH_SUBSCRIPTIONS signed `*`
 *    subscriptions to the receiver, then BENCH_EXECUTIONS executions of an
 *    action: subscriptions × executions deliveries are queued, none sent
 *    (the api role runs no delivery worker).
 * 2. `ROLE=jobs` on the same database: the rate is counted from the first
 *    delivery the receiver gets to the last, and again from one second
 *    after the first (the worker's start, its first claims and connections
 *    and a cold JIT, weighs about a second). By default 50 × 300 = 15,000
 *    deliveries, a drain of several seconds (BENCH_EXECUTIONS=100 gives the
 *    5,000 of earlier releases, a drain that start-up weighs on more).
 *
 * Embedded database in a new data dir by default; BENCH_DATABASE_URL runs it
 * on PostgreSQL instead (a new tenant per run keeps runs apart).
 *
 *   node --import tsx bench/webhooks.ts
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { createHmac, timingSafeEqual } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  benchAdmin,
  createBenchDatabase,
  ensureBundle,
  freePort,
  profileDirectory,
  repoRoot,
  report
} from "./Harness.ts"
import { format, summarize } from "./ProfileSummary.ts"

const subscriptions = Number(process.env.BENCH_SUBSCRIPTIONS ?? 50)
const executions = Number(process.env.BENCH_EXECUTIONS ?? 300)
const expected = subscriptions * executions
const signingSecret = "bench-signing-secret-0123456789"
const tenantPassword = "Bench-Tenant-Passw0rd!"

// ---------------------------------------------------------------------------
// The receiver: verifies each signature as a real receiver must, answers 204.

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

const verified = (request: IncomingMessage, body: string) => {
  const timestamp = String(request.headers["x-service-timestamp"])
  const expectedSignature = Buffer.from(
    `sha256=${createHmac("sha256", signingSecret).update(`${timestamp}.${body}`).digest("hex")}`
  )
  const given = Buffer.from(String(request.headers["x-service-signature"] ?? ""))
  return given.length === expectedSignature.length && timingSafeEqual(given, expectedSignature)
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere. */
const cpuSecondsOf = (pid: number | undefined): number | undefined => {
  try {
    // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 per second).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

let deliveries = 0
let badSignatures = 0
let firstAt = 0
let lastAt = 0
/** Deliveries received when the first second after the first one had passed, and when that was. */
let afterFirstSecond: { readonly deliveries: number; readonly at: number } | undefined
let onDelivery: () => void = () => {}
/** The jobs role's pid, and its CPU time at the first delivery and at the last one. */
let jobsPid: number | undefined
let cpuAtFirst: number | undefined
let cpuAtLast: number | undefined

const receiver = createServer(async (request, response) => {
  const body = await readBody(request)
  if (request.url === "/hook") {
    if (!verified(request, body)) badSignatures++
    deliveries++
    const now = performance.now()
    if (deliveries === 1) {
      firstAt = now
      cpuAtFirst = cpuSecondsOf(jobsPid)
    }
    if (deliveries === expected) cpuAtLast = cpuSecondsOf(jobsPid)
    if (afterFirstSecond === undefined && now - firstAt >= 1000) afterFirstSecond = { deliveries, at: now }
    lastAt = now
    onDelivery()
  }
  response.writeHead(request.url === "/action" ? 200 : 204, { "content-type": "application/json" }).end(
    request.url === "/action" ? "{}" : ""
  )
})
let connections = 0
receiver.on("connection", () => connections++)
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

// ---------------------------------------------------------------------------
// Baseline: the receiver's throughput for the same signed POST, 64 connections.

const sampleBody = JSON.stringify({
  id: crypto.randomUUID(),
  event: "on_action_executed",
  created_at: new Date().toISOString(),
  tenant_id: crypto.randomUUID(),
  data: {
    execution_id: crypto.randomUUID(),
    action_id: crypto.randomUUID(),
    action_name: "bench",
    success: true,
    status_code: 200
  }
})
const sampleTimestamp = Math.floor(Date.now() / 1000)
const baseline = await autocannon({
  url: `${receiverUrl}/baseline`,
  method: "POST",
  connections: 64,
  // Long enough that autocannon's one-second sampling does not cap the rate.
  duration: 5,
  body: sampleBody,
  headers: {
    "content-type": "application/json",
    "x-service-timestamp": String(sampleTimestamp),
    "x-service-signature": `sha256=${
      createHmac("sha256", signingSecret).update(`${sampleTimestamp}.${sampleBody}`).digest("hex")
    }`
  }
})
const baselineRate = baseline.requests.total / ((baseline.finish.getTime() - baseline.start.getTime()) / 1000)
report("baseline: the receiver, autocannon, 64 connections, 5 s", `${baselineRate.toFixed(0)} POSTs/s`)

// ---------------------------------------------------------------------------
// The service, as `pnpm start` runs it, in one role.

/** BENCH_PROFILE=1: the jobs role runs under `--cpu-prof` (BENCH_PROFILE_DIR keeps its file). */
const profileDir = process.env.BENCH_PROFILE === "1" ? profileDirectory() : undefined

/** Spawns the service with `env` (the jobs role under `--cpu-prof` with BENCH_PROFILE=1). */
const spawnService = (env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [
    ...(profileDir !== undefined && env.ROLE === "jobs" ? ["--cpu-prof", `--cpu-prof-dir=${profileDir.path}`] : []),
    "packages/server/dist/main.mjs"
  ], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit"]
  })

const stopService = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/**
 * Waits for GET /health to answer 200. Each probe has its own deadline: the
 * server accepts connections a moment before its routes are installed, and a
 * request in that window is never answered.
 */
const waitHealthy = async (url: string, child: ChildProcess) => {
  const started = performance.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode})`)
    const status = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) }).then(async (r) => {
      await r.arrayBuffer()
      return r.status
    }, () => 0)
    if (status === 200) return
    if (performance.now() - started > 120_000) throw new Error("not healthy after 120 s")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// ---------------------------------------------------------------------------
// Phase 1: queue the deliveries with the api role.

// On PostgreSQL, a database of its own, migrated from scratch and dropped at the end.
const serverUrl = process.env.BENCH_DATABASE_URL
const benchDatabase = serverUrl === undefined || serverUrl === ""
  ? undefined
  : await createBenchDatabase(serverUrl, "webhooks")
const databaseUrl = benchDatabase?.url
const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-webhooks-"))
const env: Record<string, string> = {
  ACTIONS_ALLOW_PRIVATE_NETWORKS: "true",
  BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
  SESSION_SECRET: "bench-webhooks-session-secret-0123456789abcdef",
  ...(databaseUrl === undefined || databaseUrl === "" ? { DATA_DIR: dataDir } : { DATABASE_URL: databaseUrl })
}

const request = async (
  base: string,
  path: string,
  init: { method?: string; body?: unknown; cookie?: string; key?: string } = {}
) => {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers: {
      "content-type": "application/json",
      ...(init.cookie === undefined ? {} : { cookie: init.cookie }),
      ...(init.key === undefined ? {} : { authorization: `Bearer ${init.key}` })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  const text = await response.text()
  return {
    status: response.status,
    body: text.length > 0 ? JSON.parse(text) : undefined,
    cookies: response.headers.getSetCookie()
  }
}

const signIn = async (base: string, email: string, password: string) => {
  const login = await request(base, "/api/auth/login", { method: "POST", body: { email, password } })
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`)
  return login.cookies.map((c) => c.split(";")[0]).join("; ")
}

const expectStatus = (what: string, result: { status: number; body: unknown }, status: number) => {
  if (result.status !== status) throw new Error(`${what}: ${result.status} ${JSON.stringify(result.body)}`)
  return result.body as Record<string, any>
}

await ensureBundle()

try {
  const port = await freePort()
  const apiProcess = spawnService({ ...env, ROLE: "api", PORT: String(port), HOST: "127.0.0.1" })
  const api = { url: `http://127.0.0.1:${port}` }
  try {
    await waitHealthy(api.url, apiProcess)
    const superadmin = await signIn(api.url, benchAdmin.email, benchAdmin.password)
    const email = `bench-${crypto.randomUUID().slice(0, 8)}@example.com`
    expectStatus(
      "create tenant",
      await request(api.url, "/api/admin/tenants", {
        method: "POST",
        cookie: superadmin,
        body: { name: `bench ${crypto.randomUUID().slice(0, 8)}`, admin_email: email, admin_password: tenantPassword }
      }),
      201
    )
    const cookie = await signIn(api.url, email, tenantPassword)
    for (let i = 0; i < subscriptions; i++) {
      expectStatus(
        "subscribe",
        await request(api.url, "/api/webhook-subs", {
          method: "POST",
          cookie,
          body: { name: `bench ${i}`, url: `${receiverUrl}/hook`, signing_secret: signingSecret }
        }),
        201
      )
    }
    const action = expectStatus(
      "create action",
      await request(api.url, "/api/admin/actions", {
        method: "POST",
        cookie,
        body: {
          name: "bench",
          description: "",
          http_method: "POST",
          url: `${receiverUrl}/action`,
          parameters: [],
          is_active: true
        }
      }),
      201
    )
    // 60 executions per key and minute: a new key every 50.
    let key = ""
    for (let i = 0; i < executions; i++) {
      if (i % 50 === 0) {
        key = expectStatus(
          "create key",
          await request(api.url, "/v1/keys", {
            method: "POST",
            cookie,
            body: { name: "bench", scopes: ["actions"] }
          }),
          201
        ).key
      }
      expectStatus(
        "execute",
        await request(api.url, `/v1/actions/${action.id}/execute`, { method: "POST", key, body: {} }),
        200
      )
    }
  } finally {
    await stopService(apiProcess)
  }
  if (deliveries !== 0) throw new Error(`the api role delivered ${deliveries} webhooks; it should queue them only`)

  // -------------------------------------------------------------------------
  // Phase 2: the jobs role drains the queue.

  const drained = new Promise<void>((resolve) => {
    onDelivery = () => {
      if (deliveries >= expected) resolve()
    }
  })
  const connectionsBefore = connections
  const started = performance.now()
  const jobs = spawnService({ ...env, ROLE: "jobs" })
  jobsPid = jobs.pid
  const timeout = setTimeout(() => {
    console.error(`timed out with ${deliveries}/${expected} deliveries`)
    jobs.kill("SIGTERM")
    process.exit(1)
  }, 300_000)
  await drained
  clearTimeout(timeout)
  const drainedAfter = performance.now() - started
  await stopService(jobs)

  const rate = (deliveries - 1) / ((lastAt - firstAt) / 1000)
  const backend = databaseUrl === undefined || databaseUrl === "" ? "embedded" : "PostgreSQL"
  report(
    `jobs role, ${backend}: ${subscriptions} subs x ${executions} executions`,
    `${rate.toFixed(0)} deliveries/s  (${(rate / baselineRate).toFixed(2)}x baseline)`
  )
  if (afterFirstSecond !== undefined && lastAt > afterFirstSecond.at) {
    // The first second holds the worker's start: its first claims, its first connections, a cold JIT.
    const steady = (deliveries - afterFirstSecond.deliveries) / ((lastAt - afterFirstSecond.at) / 1000)
    report(
      "  after the first second of deliveries",
      `${steady.toFixed(0)} deliveries/s  (${(steady / baselineRate).toFixed(2)}x baseline)`
    )
  }
  report("  from spawning the jobs role to the last delivery", `${(drainedAfter / 1000).toFixed(1)} s`)
  report("  signatures that failed verification", String(badSignatures))
  report("  connections the jobs role opened to the receiver", String(connections - connectionsBefore))
  if (cpuAtFirst !== undefined && cpuAtLast !== undefined) {
    // Busy CPU of the jobs role while it delivered (embedded: the database's work included): less noisy than the
    // rate on a shared machine, and what a core could sustain when the receiver and the database have their own.
    const perDelivery = ((cpuAtLast - cpuAtFirst) * 1e6) / (deliveries - 1)
    report(
      "  jobs role CPU per delivery while draining",
      `${perDelivery.toFixed(0)} µs  (${(1e6 / perDelivery).toFixed(0)} deliveries/s per core)`
    )
  }
  if (profileDir !== undefined) {
    const file = profileDir.latest()
    if (file !== undefined) {
      console.log(`\nCPU profile of the jobs role (${deliveries} deliveries, start-up included):`)
      console.log(format(summarize(file), { requests: deliveries, top: 30 }))
    }
  }
} finally {
  receiver.closeAllConnections()
  receiver.close()
  rmSync(dataDir, { recursive: true, force: true })
  // The profile is summarised above: its directory goes too, unless BENCH_PROFILE_DIR named it.
  profileDir?.done()
  await benchDatabase?.drop()
}
