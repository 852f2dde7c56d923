/**
 * Memory under sustained load: the service's resident set size (RSS) while it
 * answers BENCH_REQUESTS (default 1,000,000) `GET /v1/agents` with rotating
 * keys, sampled every few seconds. Flat means the RSS at the end, and the
 * highest sample after warm-up, stay within ±10 % of the RSS once warmed up
 * (after the first tenth of the requests); the idle RSS (before the first
 * request) is printed beside them. Each figure comes with where the memory is
 * (bench/servers/MemoryProbe.mjs, loaded into the service), and the run with
 * the service's CPU time per request. The baseline is a bare node:http
 * server's RSS under the same load, measured in the same run.
 *
 * Embedded database by default; BENCH_DATABASE_URL (+ BENCH_REDIS_URL) runs it
 * on PostgreSQL instead (a database of its own, dropped afterwards).
 *
 *   pnpm bench:memory     (BENCH_REQUESTS=1000000, BENCH_CONNECTIONS=32, BENCH_KEYS=4000)
 *
 * BENCH_NODE_ARGS passes flags to the service's node (e.g. `--trace-gc`,
 * written to the service's log, whose path is then printed).
 */
import autocannon from "autocannon"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  benchAdmin,
  report,
  rssMiB,
  seedAgentsAndKeys,
  type Service,
  startBaseline,
  startService,
  withBenchDatabase
} from "./Harness.ts"

const requests = Number(process.env.BENCH_REQUESTS ?? 1_000_000)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const keyCount = Number(process.env.BENCH_KEYS ?? 4000)
const sampleEveryMs = 2000
const probePath = join(import.meta.dirname, "servers", "MemoryProbe.mjs")

/** One line of bench/servers/MemoryProbe.mjs, in MiB. */
interface Breakdown {
  readonly rss: number
  readonly heapTotal: number
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
  readonly spaces: Record<string, number>
}

interface Point {
  readonly done: number
  readonly rss: number
  readonly breakdown: Breakdown | undefined
}

interface Samples {
  readonly points: ReadonlyArray<Point>
  readonly non2xx: number
  readonly seconds: number
  /** CPU time the process spent (user + system) while it answered them. */
  readonly cpuSeconds: number
}

/** CPU time (user + system) a process has used, in seconds (Linux: /proc; clock ticks of 1/100 s). */
const cpuSecondsOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The probe's latest line, if it has written one. */
const latestBreakdown = (probeFile: string | undefined): Breakdown | undefined => {
  if (probeFile === undefined || !existsSync(probeFile)) return undefined
  const lines = readFileSync(probeFile, "utf8").trimEnd().split("\n")
  return lines.at(-1) === "" ? undefined : JSON.parse(lines.at(-1)!) as Breakdown
}

/** `requests` GETs on `url` over `headers` in turn, sampling the RSS of `pid` (and its probe's breakdown). */
const soak = (
  url: string,
  pid: number,
  headers: ReadonlyArray<Record<string, string>>,
  total: number,
  probeFile?: string
): Promise<Samples> =>
  new Promise((resolve, reject) => {
    let next = 0
    let done = 0
    const sample = (): Point => ({ done, rss: rssMiB(pid), breakdown: latestBreakdown(probeFile) })
    const points: Array<Point> = [sample()]
    const cpuBefore = cpuSecondsOf(pid)
    const timer = setInterval(() => points.push(sample()), sampleEveryMs)
    const instance = autocannon({
      url,
      connections,
      amount: total,
      requests: [{
        method: "GET",
        setupRequest: (r) => ({ ...r, headers: { ...r.headers, ...headers[next++ % headers.length] } })
      }]
    }, (error, result) => {
      clearInterval(timer)
      if (error) return reject(error)
      points.push(sample())
      resolve({ points, non2xx: result.non2xx, seconds: result.duration, cpuSeconds: cpuSecondsOf(pid) - cpuBefore })
    })
    instance.on("response", () => done++)
  })

const percent = (value: number, reference: number) => {
  const change = (value - reference) / reference * 100
  return `${change >= 0 ? "+" : ""}${change.toFixed(1)} %`
}

/**
 * Where a sample's memory is, in MiB: V8's heap (used/reserved, and its young
 * and old generations), memory outside it that JS objects own (external:
 * PGlite's WASM memory, array buffers), and the rest (code, stacks, native
 * allocations, the binary's pages).
 */
const breakdownOf = ({ breakdown }: Point) =>
  breakdown === undefined ?
    "" :
    `   [heap ${breakdown.heapUsed.toFixed(0)}/${breakdown.heapTotal.toFixed(0)} (new ${
      (breakdown.spaces.new_space ?? 0).toFixed(0)
    }, old ${(breakdown.spaces.old_space ?? 0).toFixed(0)}), external ${breakdown.external.toFixed(0)} (array buffers ${
      breakdown.arrayBuffers.toFixed(0)
    }), other ${(breakdown.rss - breakdown.heapTotal - breakdown.external).toFixed(0)}]`

/**
 * The verdict: the RSS once warmed up (after the first tenth of the requests)
 * against the highest sample from then on and the last one; the idle RSS
 * (before the first request) is printed beside it.
 */
const describe = (label: string, samples: Samples, total: number) => {
  const idle = samples.points[0]
  const warm = samples.points.find(({ done }) => done >= total / 10) ?? idle
  const after = samples.points.filter(({ done }) => done >= warm.done)
  const end = samples.points.at(-1)!
  const peak = after.reduce((highest, point) => point.rss > highest.rss ? point : highest)
  const flat = Math.abs(end.rss - warm.rss) / warm.rss <= 0.1 && (peak.rss - warm.rss) / warm.rss <= 0.1
  report(label, flat ? "flat (within ±10 % of warm)" : "NOT FLAT (beyond ±10 % of warm)")
  report("  RSS idle (before the first request)", `${idle.rss.toFixed(0)} MiB${breakdownOf(idle)}`)
  report(
    `  RSS warm (after ${warm.done} requests)`,
    `${warm.rss.toFixed(0)} MiB (${percent(warm.rss, idle.rss)} over idle)${breakdownOf(warm)}`
  )
  report(
    `  RSS peak (after ${peak.done} requests)`,
    `${peak.rss.toFixed(0)} MiB (${percent(peak.rss, warm.rss)} over warm, ${percent(peak.rss, idle.rss)} over idle)${
      breakdownOf(peak)
    }`
  )
  report(
    "  RSS at the end",
    `${end.rss.toFixed(0)} MiB (${percent(end.rss, warm.rss)} over warm, ${percent(end.rss, idle.rss)} over idle)${
      breakdownOf(end)
    }`
  )
  report("  requests, time, non-2xx", `${total}, ${samples.seconds.toFixed(0)} s, ${samples.non2xx}`)
  report("  CPU per request (user + system)", `${(samples.cpuSeconds / total * 1e6).toFixed(0)} µs`)
}

const run = async (name: string, env: Record<string, string>) => {
  console.log(`\n== ${name} ==`)
  const services: Array<Service> = []
  try {
    const probeFile = join(probeDir, "memory-probe.jsonl")
    const platform = await startService({ ...env, MEMORY_PROBE_FILE: probeFile }, {
      nodeArgs: ["--import", probePath]
    })
    services.push(platform)
    if (process.env.BENCH_NODE_ARGS) console.log(`service log: ${platform.logFile} (BENCH_KEEP_LOGS=1 keeps it)`)
    const { agents, keys } = await seedAgentsAndKeys(platform.url, keyCount)
    const bare = await startBaseline("BareNode.ts", { AGENTS_JSON: JSON.stringify(agents) })
    services.push(bare)
    const bareTotal = Math.min(requests, 200_000)
    describe(
      "baseline: bare node:http",
      await soak(`${bare.url}/v1/agents`, bare.process.pid!, [{}], bareTotal),
      bareTotal
    )
    describe(
      "GET /v1/agents",
      await soak(
        `${platform.url}/v1/agents`,
        platform.process.pid!,
        keys.map(({ key }) => ({ authorization: `Bearer ${key}` })),
        requests,
        probeFile
      ),
      requests
    )
  } finally {
    for (const service of services) await service.stop()
  }
}

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-memory-"))
const probeDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-memory-probe-"))
const serverUrl = process.env.BENCH_DATABASE_URL
try {
  if (serverUrl === undefined || serverUrl === "") {
    await run("embedded database", { DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password })
  } else {
    await withBenchDatabase(serverUrl, "memory", (url, redisPrefix) =>
      run("PostgreSQL", {
        DATABASE_URL: url,
        SESSION_SECRET: "bench-memory-session-secret-0123456789abcdef",
        BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
        ...(process.env.BENCH_REDIS_URL
          ? { REDIS_URL: process.env.BENCH_REDIS_URL, REDIS_PREFIX: redisPrefix }
          : {})
      }), process.env.BENCH_REDIS_URL)
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(probeDir, { recursive: true, force: true })
}
