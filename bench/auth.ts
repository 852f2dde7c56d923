/**
 * Throughput and p99 latency of a request that passes API-key verification,
 * the scope check and the rate limiter (`GET /v1/agents`), against a bare
 * node:http JSON server measured in the same run. Keys rotate so that no key
 * reaches its per-minute limit: every request does the full work.
 *
 *   pnpm bench:auth            (BENCH_SECONDS=10, BENCH_CONNECTIONS=32)
 */
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { benchAdmin, freePort, report, startService } from "./Harness.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)

interface Result {
  readonly rps: number
  readonly p99: number
  readonly non2xx: number
}

const load = (url: string, headers: ReadonlyArray<Record<string, string>>): Promise<Result> =>
  new Promise((resolve, reject) => {
    let next = 0
    autocannon({
      url,
      connections,
      duration: seconds,
      requests: [{
        method: "GET",
        setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...headers[next++ % headers.length] } })
      }]
    }, (error, result) => {
      if (error) return reject(error)
      resolve({ rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx })
    })
  })

const baseline = async (): Promise<Result> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["-e", `
    require("node:http").createServer((req, res) => {
      const body = JSON.stringify({ agents: [] })
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    }).listen(${port}, "127.0.0.1")`])
  try {
    for (;;) {
      if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) break
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    return await load(`http://127.0.0.1:${port}/v1/agents`, [{}])
  } finally {
    child.kill()
  }
}

const platform = async (): Promise<Result> => {
  const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-"))
  const service = await startService({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password, LOG_LEVEL: "Error" })
  try {
    const login = await fetch(`${service.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(benchAdmin)
    })
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]
    // Enough keys that none exceeds the 300/min data limit during the run.
    const keyCount = Math.ceil((seconds * 20_000) / 250)
    const keys: Array<Record<string, string>> = []
    for (let i = 0; i < keyCount; i++) {
      const response = await fetch(`${service.url}/v1/keys`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify({ name: `bench ${i}`, scopes: ["agents:read"], rate_limit_rpm: 100_000 })
      })
      const { key } = (await response.json()) as { key: string }
      keys.push({ authorization: `Bearer ${key}` })
    }
    // Warm the key cache and the JIT, as a long-running service would be.
    await load(`${service.url}/v1/agents`, keys)
    return await load(`${service.url}/v1/agents`, keys)
  } finally {
    await service.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const bare = await baseline()
const measured = await platform()
report("baseline: bare node:http JSON server", `${bare.rps.toFixed(0)} req/s, p99 ${bare.p99} ms`)
report("GET /v1/agents (key verify + scope + rate limit), embedded DB", `${measured.rps.toFixed(0)} req/s, p99 ${measured.p99} ms, non-2xx ${measured.non2xx}`)
report("ratio to baseline (throughput)", `${(measured.rps / bare.rps).toFixed(3)}`)
report("ratio to baseline (p99)", `${(measured.p99 / Math.max(bare.p99, 1)).toFixed(1)}x`)
