/**
 * Time to healthy: from spawning `node packages/server/src/main.ts` to the
 * first 200 from GET /health, for the embedded database (a new data dir, then
 * reopening it: target ≤ 3 s) and for real PostgreSQL when
 * `BENCH_DATABASE_URL` (or `TEST_DATABASE_URL`) is set. The baseline is the
 * same spawn of a bare node:http server, measured in the same run. Also
 * printed: the idle resident set size (RSS) once healthy, against a bare
 * node:http server's.
 *
 *   pnpm bench:startup
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, median, ms, report, rssMiB, startService, withBenchDatabase } from "./Harness.ts"

const baseline = async (): Promise<number> => {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [
    "-e",
    `require("node:http").createServer((q, s) => s.end("{}")).listen(${port}, "127.0.0.1")`
  ])
  for (;;) {
    if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  const elapsed = performance.now() - started
  child.kill()
  return elapsed
}

/** RSS of an idle process, 2 s after it became healthy (the start-up's garbage collected). */
const idleRss = async (pid: number) => {
  await new Promise((resolve) => setTimeout(resolve, 2000))
  return rssMiB(pid)
}

/** The RSS of a bare node:http server, idle. */
const bareIdleRss = async () => {
  const port = await freePort()
  const child = spawn(process.execPath, [
    "-e",
    `require("node:http").createServer((q, s) => s.end("{}")).listen(${port}, "127.0.0.1")`
  ])
  for (;;) {
    if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  const rss = await idleRss(child.pid!)
  child.kill()
  return rss
}

const runs = Number(process.env.BENCH_RUNS ?? 3)
const bare = median(
  await Promise.all(Array.from({ length: 1 }, baseline)).then(async (first) => {
    const rest = []
    for (let i = 1; i < runs; i++) rest.push(await baseline())
    return [...first, ...rest]
  })
)
report("baseline: bare node:http server, spawn to first response", ms(bare))
const bareRss = await bareIdleRss()

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-"))
try {
  const fresh = await startService({ DATA_DIR: dataDir })
  const idle = await idleRss(fresh.process.pid!)
  await fresh.stop()
  report(
    "embedded, new data dir (initdb + migrations + bootstrap)",
    `${ms(fresh.healthyAfterMs)}  (${(fresh.healthyAfterMs / bare).toFixed(1)}x baseline)`
  )
  report("embedded, idle RSS once healthy", `${idle.toFixed(0)} MiB  (bare node:http: ${bareRss.toFixed(0)} MiB)`)
  const reopenTimes: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const reopened = await startService({ DATA_DIR: dataDir })
    reopenTimes.push(reopened.healthyAfterMs)
    await reopened.stop()
  }
  const reopen = median(reopenTimes)
  report(
    "embedded, reopening the data dir (median)",
    `${ms(reopen)}  (${(reopen / bare).toFixed(1)}x baseline; target <= 3000 ms: ${reopen <= 3000 ? "met" : "MISSED"})`
  )
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl !== undefined && serverUrl !== "") {
  // A database of its own: the first start migrates it from scratch, the others reopen it.
  await withBenchDatabase(serverUrl, "startup", async (databaseUrl) => {
    const times: Array<number> = []
    let pgRss = 0
    for (let i = 0; i < runs; i++) {
      const service = await startService({ DATABASE_URL: databaseUrl, SESSION_SECRET: "bench-".padEnd(40, "x") })
      times.push(service.healthyAfterMs)
      if (i === 0) pgRss = await idleRss(service.process.pid!)
      await service.stop()
    }
    const pg = median(times)
    report("PostgreSQL (median)", `${ms(pg)}  (${(pg / bare).toFixed(1)}x baseline)`)
    report("PostgreSQL, idle RSS once healthy", `${pgRss.toFixed(0)} MiB  (bare node:http: ${bareRss.toFixed(0)} MiB)`)
  })
} else {
  report("PostgreSQL", "skipped: set BENCH_DATABASE_URL to measure")
}
