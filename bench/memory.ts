/**
 * Memory under sustained load: the service's resident set size (RSS) while it
 * answers BENCH_REQUESTS (default 1,000,000) `GET /v1/agents` with rotating
 * keys, sampled every few seconds. Flat means the RSS at the end, and the
 * highest sample after warm-up, stay within ±10 % of the RSS once warmed up
 * (after the first tenth of the requests). The baseline is a bare node:http
 * server's RSS under the same load, measured in the same run.
 *
 * Embedded database by default; BENCH_DATABASE_URL (+ BENCH_REDIS_URL) runs it
 * on PostgreSQL instead (a database of its own, dropped afterwards).
 *
 *   pnpm bench:memory     (BENCH_REQUESTS=1000000, BENCH_CONNECTIONS=32, BENCH_KEYS=1000)
 */
import autocannon from "autocannon"
import { mkdtempSync, rmSync } from "node:fs"
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
const keyCount = Number(process.env.BENCH_KEYS ?? 1000)
const sampleEveryMs = 2000

interface Samples {
  /** [requests done, RSS MiB] */
  readonly points: ReadonlyArray<readonly [number, number]>
  readonly non2xx: number
  readonly seconds: number
}

/** `requests` GETs on `url` over `headers` in turn, sampling the RSS of `pid`. */
const soak = (
  url: string,
  pid: number,
  headers: ReadonlyArray<Record<string, string>>,
  total = requests
): Promise<Samples> =>
  new Promise((resolve, reject) => {
    let next = 0
    let done = 0
    const points: Array<readonly [number, number]> = [[0, rssMiB(pid)]]
    const timer = setInterval(() => points.push([done, rssMiB(pid)]), sampleEveryMs)
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
      points.push([done, rssMiB(pid)])
      resolve({ points, non2xx: result.non2xx, seconds: result.duration })
    })
    instance.on("response", () => done++)
  })

const describe = (label: string, samples: Samples, total = requests) => {
  const warm = samples.points.find(([done]) => done >= total / 10) ?? samples.points[0]
  const after = samples.points.filter(([done]) => done >= warm[0])
  const end = samples.points.at(-1)![1]
  const max = Math.max(...after.map(([, rss]) => rss))
  const drift = (end - warm[1]) / warm[1]
  const peak = (max - warm[1]) / warm[1]
  const flat = Math.abs(drift) <= 0.1 && peak <= 0.1
  report(
    label,
    `RSS ${samples.points[0][1].toFixed(0)} MiB idle, ${warm[1].toFixed(0)} MiB warm, ${
      end.toFixed(0)
    } MiB at the end (${(drift * 100).toFixed(1)} %), peak ${max.toFixed(0)} MiB (+${(peak * 100).toFixed(1)} %): ${
      flat ? "flat" : "NOT FLAT"
    }`
  )
  report("  requests, time, non-2xx", `${total}, ${samples.seconds.toFixed(0)} s, ${samples.non2xx}`)
}

const run = async (name: string, env: Record<string, string>) => {
  console.log(`\n== ${name} ==`)
  const services: Array<Service> = []
  try {
    const platform = await startService(env)
    services.push(platform)
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
        keys.map(({ key }) => ({ authorization: `Bearer ${key}` }))
      )
    )
  } finally {
    for (const service of services) await service.stop()
  }
}

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-memory-"))
const serverUrl = process.env.BENCH_DATABASE_URL
try {
  if (serverUrl === undefined || serverUrl === "") {
    await run("embedded database", { DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password })
  } else {
    await withBenchDatabase(serverUrl, "memory", (url) =>
      run("PostgreSQL", {
        DATABASE_URL: url,
        SESSION_SECRET: "bench-memory-session-secret-0123456789abcdef",
        BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
        ...(process.env.BENCH_REDIS_URL
          ? { REDIS_URL: process.env.BENCH_REDIS_URL, REDIS_PREFIX: `bench-memory-${process.pid}:` }
          : {})
      }))
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
