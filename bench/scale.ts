/**
 * Scale-out: `GET /v1/agents` with a key through one and through two
 * `ROLE=api` processes on one PostgreSQL and Redis, each time behind the same
 * small round-robin proxy (bench/servers/RoundRobinProxy.ts, keep-alive), so
 * the proxy's cost is in both figures. Measured in the same run, interleaved
 * round by round; prints the ratio two ÷ one (and, for reference, one
 * process without the proxy, which shows what the proxy itself costs).
 *
 * Read the ratio with the machine in mind: two API processes can only run
 * twice as fast when there are cores for both of them beside the load
 * generator, the proxy, PostgreSQL and Redis. On a 2-core machine everything
 * shares two cores, and the ratio shows that a second process costs nothing
 * in coordination (the rate limit, the key cache and the notifications are
 * shared through Redis and PostgreSQL, not between the processes) rather
 * than how far the service scales; the printed load average says how busy
 * the machine was.
 *
 * Needs BENCH_DATABASE_URL and BENCH_REDIS_URL (a database of its own is
 * created on that server and dropped afterwards); skipped without them.
 *
 *   pnpm bench:scale    (BENCH_SECONDS=6, BENCH_ROUNDS=3, BENCH_CONNECTIONS=32, BENCH_KEYS=4000)
 */
import { cpus, loadavg } from "node:os"
import pg from "pg"
import {
  benchAdmin,
  load as loadWith,
  type LoadResult,
  median,
  report,
  seedAgentsAndKeys,
  type Service,
  startBaseline,
  startService,
  withBenchDatabase
} from "./Harness.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 6)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
// Each key may make 300 requests a minute (the data class limit): enough keys that none is refused.
const keyCount = Number(process.env.BENCH_KEYS ?? 4000)

interface Result extends Omit<LoadResult, "requests"> {
  /** Committed database transactions per request served (the statistics of the bench's database). */
  readonly commitsPerRequest?: number
}

/** Load on `url` for `duration` seconds, each request with the next key. */
const load = (url: string, headers: ReadonlyArray<Record<string, string>>, duration = seconds): Promise<Result> =>
  loadWith(url, headers, { connections, duration })

const serverUrl = process.env.BENCH_DATABASE_URL
const redisUrl = process.env.BENCH_REDIS_URL
if (serverUrl === undefined || serverUrl === "" || redisUrl === undefined || redisUrl === "") {
  console.log(
    "bench:scale skipped: set BENCH_DATABASE_URL and BENCH_REDIS_URL (several API processes need a shared PostgreSQL and Redis)"
  )
} else {
  await withBenchDatabase(serverUrl, "scale", async (url, redisPrefix) => {
    const env = {
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      SESSION_SECRET: "bench-scale-session-secret-0123456789abcdef",
      BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
      ROLE: "api"
    }
    const services: Array<Pick<Service, "stop">> = []
    try {
      const first = await startService(env)
      services.push(first)
      const second = await startService(env)
      services.push(second)
      const { keys } = await seedAgentsAndKeys(first.url, keyCount)
      const headers = keys.map(({ key }) => ({ authorization: `Bearer ${key}` }))
      const throughOne = await startBaseline("RoundRobinProxy.ts", { UPSTREAMS: first.url })
      services.push(throughOne)
      const throughTwo = await startBaseline("RoundRobinProxy.ts", { UPSTREAMS: `${first.url},${second.url}` })
      services.push(throughTwo)
      // The database's own count of committed transactions (flushed by the server at least every second).
      const stats = new pg.Client({ connectionString: url })
      await stats.connect()
      services.push({ stop: () => stats.end() })
      const commits = async () => {
        await new Promise((resolve) => setTimeout(resolve, 1100))
        await stats.query("SELECT pg_stat_clear_snapshot()")
        const { rows } = await stats.query<{ commits: string }>(
          "SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()"
        )
        return Number(rows[0].commits)
      }
      const targets = [
        { label: "direct", url: `${first.url}/v1/agents` },
        { label: "one", url: `${throughOne.url}/v1/agents` },
        { label: "two", url: `${throughTwo.url}/v1/agents` }
      ] as const
      const runs = new Map<string, Array<Result>>(targets.map((t) => [t.label, []]))
      const loadBefore = loadavg()[0]
      for (const target of targets) await load(target.url, headers, 2) // warm-up: JIT, caches, pools
      for (let round = 0; round < rounds; round++) {
        // Every other round in reverse order, so neither target always follows the other.
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
          const before = await commits()
          const result = await load(target.url, headers)
          const after = await commits()
          runs.get(target.label)!.push({ ...result, commitsPerRequest: (after - before) / (result.rps * seconds) })
        }
      }
      const loadAfter = loadavg()[0]
      const summary = (label: string) => {
        const results = runs.get(label)!
        return {
          rps: median(results.map((r) => r.rps)),
          p99: median(results.map((r) => r.p99)),
          non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
          commitsPerRequest: median(results.map((r) => r.commitsPerRequest ?? Number.NaN))
        }
      }
      const direct = summary("direct")
      const one = summary("one")
      const two = summary("two")
      console.log(
        `\n== GET /v1/agents through a round-robin proxy, PostgreSQL + Redis (${connections} connections, ${rounds} rounds of ${seconds} s, median) ==`
      )
      const line = (text: string, r: Result, label: string) =>
        report(
          text,
          `${r.rps.toFixed(0).padStart(6)} req/s  p99 ${String(r.p99).padStart(3)} ms${
            r.non2xx > 0 ? `  non-2xx ${r.non2xx}` : ""
          }  ${(r.commitsPerRequest ?? Number.NaN).toFixed(2)} db commits/request  (rounds: ${
            runs.get(label)!.map((x) => x.rps.toFixed(0)).join(", ")
          } req/s)`
        )
      line("reference: one ROLE=api process, no proxy", direct, "direct")
      line("baseline: one ROLE=api process behind the proxy", one, "one")
      line("two ROLE=api processes behind the proxy", two, "two")
      report("  two ÷ one", (two.rps / one.rps).toFixed(2))
      report("  one behind the proxy ÷ no proxy (the proxy's cost)", (one.rps / direct.rps).toFixed(2))
      report(
        "  machine",
        `${cpus().length} cores; load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after`
      )
      if (cpus().length <= 2) {
        console.log(
          "  (every process of this bench shares these cores: the ratio shows the cost of a second process, not the scaling a machine with spare cores gives)"
        )
      }
    } finally {
      for (const service of services.reverse()) await service.stop()
    }
  }, redisUrl)
}
