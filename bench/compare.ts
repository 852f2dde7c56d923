/**
 * Two builds of the service (or one build with two settings) under the same
 * load, interleaved round by round, so that a noisy machine moves both alike:
 * requests per second and, steadier, the service process's CPU time per
 * request (user + system, from /proc). How each change of the performance
 * rounds was measured before it landed.
 *
 *   pnpm bench:compare <bundle A> [bundle B]
 *
 * A bundle is what `node packages/server/scripts/bundle.mjs <outfile>` builds:
 * this checkout's (the default for B) or another revision's, from a worktree
 * with its own `node_modules` (a revision may patch its dependencies
 * differently):
 *
 *   git worktree add ../base <rev> && (cd ../base && pnpm install && node packages/server/scripts/bundle.mjs)
 *   pnpm bench:compare ../base/packages/server/dist/main.mjs
 *
 * COMPARE_ENV_A and COMPARE_ENV_B (JSON objects) add environment variables
 * to one side, e.g. `COMPARE_ENV_B='{"NODE_OPTIONS":"--max-semi-space-size=64"}'`
 * with the same bundle on both sides; COMPARE_NODE_ARGS_A and
 * COMPARE_NODE_ARGS_B add flags for node on one side (V8 flags, which node
 * refuses in NODE_OPTIONS), e.g. `COMPARE_NODE_ARGS_B=--heap-growing-percent=0`.
 * The load is `GET /v1/agents` with keys (COMPARE_PATH: another GET path). Embedded databases, or PostgreSQL + Redis
 * when BENCH_DATABASE_URL and BENCH_REDIS_URL are set (a database and a Redis
 * prefix of its own for each side, dropped afterwards).
 *
 *   (BENCH_SECONDS=5, BENCH_ROUNDS=6, BENCH_CONNECTIONS=32, BENCH_KEYS=4000)
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import {
  benchAdmin,
  benchRedisPrefix,
  createBenchDatabase,
  ensureBundle,
  localRedisPid,
  measuredLoad,
  median,
  nodeArgsFrom,
  repoRoot,
  report,
  seedAgentsAndKeys,
  startService
} from "./Harness.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 6)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const keyCount = Number(process.env.BENCH_KEYS ?? 4000)
const path = process.env.COMPARE_PATH ?? "/v1/agents"
const serverUrl = process.env.BENCH_DATABASE_URL
const redisUrl = process.env.BENCH_REDIS_URL
const onPostgres = serverUrl !== undefined && serverUrl !== "" && redisUrl !== undefined && redisUrl !== ""

const usage = "usage: pnpm bench:compare <bundle A> [bundle B]  (B: this checkout's, built first)"
const [bundleA, bundleB] = process.argv.slice(2)
if (bundleA === undefined) {
  console.error(usage)
  process.exit(2)
}

const envOf = (name: string): Record<string, string> => {
  const text = process.env[name]
  if (text === undefined || text === "") return {}
  try {
    return JSON.parse(text) as Record<string, string>
  } catch {
    console.error(`${name} must be a JSON object of environment variables, e.g. '{"LOG_LEVEL":"Warn"}'`)
    return process.exit(2)
  }
}

/** One side: its service, on a data directory or database of its own, with keys to load it with. */
const side = async (
  label: string,
  bundle: string,
  extraEnv: Record<string, string>,
  nodeArgs: ReadonlyArray<string>
) => {
  const dataDir = mkdtempSync(join(tmpdir(), `agent-platform-bench-compare-${label}-`))
  const database = onPostgres ? await createBenchDatabase(serverUrl, `compare_${label.toLowerCase()}`) : undefined
  const redis = benchRedisPrefix(database === undefined ? undefined : redisUrl, `compare-${label}`)
  const env = {
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
    ...(database === undefined ? {} : {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl!,
      REDIS_PREFIX: redis.prefix,
      SESSION_SECRET: "bench-compare-session-secret-0123456789abcdef"
    }),
    ...extraEnv
  }
  const service = await startService(env, { bundle, nodeArgs })
  const { keys } = await seedAgentsAndKeys(service.url, keyCount)
  return {
    label,
    bundle,
    nodeArgs,
    service,
    headers: keys.map(({ key }) => ({ authorization: `Bearer ${key}` })),
    cleanUp: async () => {
      await service.stop()
      await database?.drop()
      await redis.drop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

type Side = Awaited<ReturnType<typeof side>>

// The Redis server's CPU per request too, when it runs here: the service's work there is not in its own CPU.
const redisPid = onPostgres ? await localRedisPid(redisUrl) : undefined

/** One run on a side: requests/s, p99 and the service's (and Redis's) CPU µs per request. */
const run = (target: Side, duration: number) =>
  measuredLoad(target.service.process.pid!, `${target.service.url}${path}`, target.headers, {
    connections,
    duration,
    companionPid: redisPid
  })

if (bundleB === undefined) await ensureBundle()
const a = await side("A", resolve(bundleA), envOf("COMPARE_ENV_A"), nodeArgsFrom("COMPARE_NODE_ARGS_A"))
const sides: Array<Side> = [a]
try {
  sides.push(
    await side(
      "B",
      resolve(bundleB ?? join(repoRoot, "packages/server/dist/main.mjs")),
      envOf("COMPARE_ENV_B"),
      nodeArgsFrom("COMPARE_NODE_ARGS_B")
    )
  )
  const b = sides[1]
  const described = (target: Side) =>
    `${target.label}: ${target.bundle}${target.nodeArgs.length === 0 ? "" : ` (node ${target.nodeArgs.join(" ")})`}`
  console.log(`${described(a)}\n${described(b)}`)
  console.log(`GET ${path}, ${onPostgres ? "PostgreSQL + Redis" : "embedded"}, ${rounds} rounds of ${seconds} s each\n`)
  for (const target of sides) await run(target, 2) // warm-up: JIT, caches, pools
  const results: Record<"A" | "B", Array<Awaited<ReturnType<typeof run>>>> = { A: [], B: [] }
  const cpuOf = (r: Awaited<ReturnType<typeof run>>) =>
    `${r.cpuUs.toFixed(1)} µs${r.companionCpuUs === undefined ? "" : ` (Redis ${r.companionCpuUs.toFixed(1)})`}`
  for (let round = 1; round <= rounds; round++) {
    const [ra, rb] = [await run(a, seconds), await run(b, seconds)]
    results.A.push(ra)
    results.B.push(rb)
    report(
      `round ${round}`,
      `A ${ra.rps.toFixed(0)} req/s ${cpuOf(ra)}   B ${rb.rps.toFixed(0)} req/s ${cpuOf(rb)}   B/A ${
        (rb.rps / ra.rps).toFixed(2)
      }${ra.non2xx + rb.non2xx > 0 ? `  non-2xx ${ra.non2xx}/${rb.non2xx}` : ""}`
    )
  }
  /** The medians of one figure on both sides, and B ÷ A. */
  const compared = (pick: (r: Awaited<ReturnType<typeof run>>) => number, digits: number, unit: string) => {
    const [ma, mb] = [median(results.A.map(pick)), median(results.B.map(pick))]
    return `${ma.toFixed(digits)} → ${mb.toFixed(digits)}${unit}  (${(mb / ma).toFixed(2)})`
  }
  report("median requests/s (B ÷ A)", compared((r) => r.rps, 0, ""))
  report("median CPU per request (B ÷ A)", compared((r) => r.cpuUs, 1, " µs"))
  if (redisPid !== undefined) {
    report("median Redis CPU per request (B ÷ A)", compared((r) => r.companionCpuUs ?? 0, 1, " µs"))
  }
  report("median p99 (B ÷ A)", compared((r) => r.p99, 0, " ms"))
} finally {
  for (const target of sides) await target.cleanUp()
}
