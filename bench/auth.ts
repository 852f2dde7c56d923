/**
 * `GET /v1/agents` with an API key — key verification, scope check, both
 * rate limits, the agents query, the request log at the default level —
 * against three baselines measured in the same run, interleaved round by
 * round so that a noisy machine moves them all alike:
 *
 * - a bare node:http server answering the same JSON (the transport);
 * - a bare effect HttpApi server with that one endpoint and its Schema (the
 *   framework's ceiling);
 * - the same endpoint behind a security middleware and a router middleware
 *   that do no work (bench/servers/EffectSkeleton.ts): the floor of the
 *   platform's design, whose every `/v1` request passes through both;
 * - the same endpoint written by hand on node:http + `pg` (+ Redis), with the
 *   same checks (bench/servers/HandWritten.ts): what a user would write instead.
 *
 * Each figure is the median over the rounds of requests/s, p99 and the
 * serving process's CPU time per request (from /proc), and on PostgreSQL +
 * Redis the Redis server's too when it runs on this machine (the rate limits'
 * scripts run there, on one thread for every replica). The ceiling's ratio
 * is printed both ways: by requests/s (the goal's) and by CPU per request,
 * which a noisy machine moves less: client and server share its two cores.
 *
 * Also measured: `GET /health` under the same load, and a refused request
 * (429). The service runs as `pnpm start` runs it, with default settings.
 * Keys rotate so that none reaches its per-minute limits: every request does
 * the full work (the 300 per minute of each key's class; a key's window sees
 * about 20 s of this target's load, so 4,000 keys carry some 60,000 req/s; a
 * `non-2xx` count after a figure says they did not: 1,500 keys, the default
 * until 2026-11-28, were refused at 30,000). Embedded database always; PostgreSQL + Redis too when
 * BENCH_DATABASE_URL and BENCH_REDIS_URL are set (a database of its own is
 * created on that server and dropped afterwards).
 *
 * BENCH_PROFILE=1 then profiles `GET /v1/agents` under load (`node
 * --cpu-prof`) and prints self time per package and per function
 * (bench/ProfileSummary.ts). BENCH_PROFILE_DIR keeps the `.cpuprofile` file
 * there (to open in Chrome's DevTools, or to read callers from).
 *
 * BENCH_PERF=1 samples the service with Linux perf under the same load
 * (bench/PerfSummary.ts): kernel, Node and V8 native time included, which
 * V8's profiler does not see or charges to whichever function was running.
 *
 *   pnpm bench:auth     (BENCH_SECONDS=8, BENCH_ROUNDS=3, BENCH_CONNECTIONS=32, BENCH_KEYS=4000)
 */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makePromiseClient } from "../packages/sdk/src/index.ts"
import {
  benchAdmin,
  load as loadWith,
  localRedisPid,
  type MeasuredLoad,
  measuredLoad,
  median,
  profileDirectory,
  report,
  seedAgentsAndKeys,
  type Service,
  startBaseline,
  startService,
  withBenchDatabase
} from "./Harness.ts"
import { perfAvailable, perfMapFile, perfNodeArgs, recordPerf, summarizePerf } from "./PerfSummary.ts"
import { format, summarize } from "./ProfileSummary.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const keyCount = Number(process.env.BENCH_KEYS ?? 4000)
const profile = process.env.BENCH_PROFILE === "1"
const perfProfile = process.env.BENCH_PERF === "1"
const sessionSecret = "bench-auth-session-secret-0123456789abcdef"

/** Load on `url` for `duration` seconds, each request with the next of `headers`. */
const load = (url: string, headers: ReadonlyArray<Record<string, string>>, duration = seconds) =>
  loadWith(url, headers, { connections, duration })

interface Target {
  readonly label: string
  readonly url: string
  readonly headers: ReadonlyArray<Record<string, string>>
  /** The serving process. */
  readonly pid: number
  /** The Redis server it uses, when it runs here: its CPU per request is printed too. */
  readonly redisPid?: number | undefined
}

/** A load run on `target`, with the CPU time its process spent per request. */
const measure = (target: Target) =>
  measuredLoad(target.pid, target.url, target.headers, {
    connections,
    duration: seconds,
    companionPid: target.redisPid
  })

/** Every target once per round, in turn; the median of each. */
const interleaved = async (targets: ReadonlyArray<Target>) => {
  const results = new Map<string, Array<MeasuredLoad>>(targets.map((t) => [t.label, []]))
  for (const target of targets) await load(target.url, target.headers, 2) // warm-up: JIT, caches, pools
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) results.get(target.label)!.push(await measure(target))
  }
  return new Map([...results].map(([label, runs]) => [label, {
    rps: median(runs.map((r) => r.rps)),
    p99: median(runs.map((r) => r.p99)),
    cpuUs: median(runs.map((r) => r.cpuUs)),
    redisCpuUs: runs[0].companionCpuUs === undefined ? undefined : median(runs.map((r) => r.companionCpuUs ?? 0)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0)
  }]))
}

const setUp = (url: string) => seedAgentsAndKeys(url, keyCount)

type SetUp = Awaited<ReturnType<typeof setUp>>

/** 429s per second: one key over its limit, asked again and again. */
const refusedRate = async (url: string) => {
  const admin = makePromiseClient({ baseUrl: url })
  await admin.auth.login({ payload: benchAdmin })
  const { key } = await admin.keys.create({
    payload: { name: "bench exhausted", scopes: ["agents:read"], rate_limit_rpm: 1 }
  })
  await admin.dispose()
  const headers = [{ authorization: `Bearer ${key}` }]
  await fetch(`${url}/v1/agents`, { headers: headers[0] }).then((r) => r.arrayBuffer())
  return load(`${url}/v1/agents`, headers, Math.max(3, Math.round(seconds / 2)))
}

const ratio = (value: number, base: number) => (value / base).toFixed(2)

const backend = async (
  name: string,
  platformEnv: Record<string, string>,
  handWrittenEnv: (setup: SetUp) => Record<string, string>,
  redisPid?: number
) => {
  console.log(`\n== ${name} ==`)
  const platform = await startService(platformEnv)
  const services: Array<Service> = [platform]
  try {
    const setup = await setUp(platform.url)
    const keyHeaders = setup.keys.map(({ key }) => ({ authorization: `Bearer ${key}` }))
    const agentsJson = JSON.stringify(setup.agents)
    const started = async (script: string, env: Record<string, string>) => {
      const service = await startBaseline(script, env)
      services.push(service)
      return service
    }
    const bare = await started("BareNode.ts", { AGENTS_JSON: agentsJson })
    const ceiling = await started("EffectCeiling.ts", { AGENTS_JSON: agentsJson })
    const skeleton = await started("EffectSkeleton.ts", { AGENTS_JSON: agentsJson })
    const handWritten = await started("HandWritten.ts", handWrittenEnv(setup))
    const pid = (service: Service) => service.process.pid!
    const results = await interleaved([
      { label: "bare", url: `${bare.url}/v1/agents`, headers: [{}], pid: pid(bare) },
      { label: "ceiling", url: `${ceiling.url}/v1/agents`, headers: [{}], pid: pid(ceiling) },
      { label: "skeleton", url: `${skeleton.url}/v1/agents`, headers: keyHeaders, pid: pid(skeleton) },
      {
        label: "handWritten",
        url: `${handWritten.url}/v1/agents`,
        headers: keyHeaders,
        pid: pid(handWritten),
        redisPid
      },
      { label: "platform", url: `${platform.url}/v1/agents`, headers: keyHeaders, pid: pid(platform), redisPid },
      { label: "health", url: `${platform.url}/health`, headers: [{}], pid: pid(platform) }
    ])
    const get = (label: string) => results.get(label)!
    const line = (label: string, text: string) => {
      const r = get(label)
      report(
        text,
        `${r.rps.toFixed(0).padStart(6)} req/s  p99 ${String(r.p99).padStart(3)} ms  CPU ${
          r.cpuUs.toFixed(0).padStart(4)
        } µs/req${r.redisCpuUs === undefined ? "" : ` (+ Redis ${r.redisCpuUs.toFixed(0)})`}${
          r.non2xx > 0 ? `  non-2xx ${r.non2xx}` : ""
        }`
      )
    }
    line("bare", "baseline: bare node:http, same JSON")
    line("ceiling", "baseline: bare effect HttpApi endpoint + Schema (ceiling)")
    line("skeleton", "baseline: the same + no-op key and edge middlewares")
    line("handWritten", "baseline: by hand on node:http + pg, same checks")
    line("platform", "GET /v1/agents (key, scope, rate limits, query, log)")
    line("health", "GET /health")
    const p = get("platform")
    report("  GET /v1/agents ÷ effect ceiling (goal >= 0.6)", ratio(p.rps, get("ceiling").rps))
    // Steadier on a shared machine: what each would serve on a core of its own (the service's CPU only, not
    // its database's or Redis's; the hand-written baseline's database work is outside its process too).
    report("  the same by CPU per request (ceiling's ÷ the service's)", ratio(get("ceiling").cpuUs, p.cpuUs))
    if (p.redisCpuUs !== undefined) {
      report(
        "  the same by CPU per request, Redis's included",
        ratio(get("ceiling").cpuUs, p.cpuUs + p.redisCpuUs)
      )
    }
    report("  GET /v1/agents ÷ hand-written (goal >= 1.0)", ratio(p.rps, get("handWritten").rps))
    report(
      "  the no-op middlewares ÷ effect ceiling (the design's floor)",
      ratio(get("skeleton").rps, get("ceiling").rps)
    )
    report("  GET /v1/agents ÷ the no-op middlewares", ratio(p.rps, get("skeleton").rps))
    report("  GET /v1/agents ÷ bare node:http", ratio(p.rps, get("bare").rps))
    report("  GET /v1/agents p99 (goal <= 20 ms)", `${p.p99} ms`)
    report("  GET /health ÷ effect ceiling (goal >= 0.5)", ratio(get("health").rps, get("ceiling").rps))
    const refused = await refusedRate(platform.url)
    report(
      "  refused requests (429), one exhausted key",
      `${refused.rps.toFixed(0)} req/s  (${ratio(refused.rps, p.rps)}x the served rate)`
    )
    return setup
  } finally {
    for (const service of services) await service.stop()
  }
}

/** `env` with rate-limit windows of their own in Redis: the measured rounds used the keys' quota. */
const freshLimits = (env: Record<string, string>, tag: string): Record<string, string> =>
  env.REDIS_PREFIX === undefined ? env : { ...env, REDIS_PREFIX: `${env.REDIS_PREFIX}${tag}:` }

/**
 * Samples the service with Linux perf under the same load (BENCH_PERF=1):
 * the kernel, Node's C++ and V8's builtins and runtime calls too, each
 * charged to the JavaScript function it ran for (bench/PerfSummary.ts).
 */
const perfRun = async (env: Record<string, string>, setup: SetUp) => {
  if (!perfAvailable()) {
    console.log("\nperf profile: skipped (perf is not on PATH)")
    return
  }
  const service = await startService(freshLimits(env, "perf"), { nodeArgs: perfNodeArgs })
  const file = join(tmpdir(), `agent-platform-bench-perf-${process.pid}.data`)
  try {
    const headers = setup.keys.map(({ key }) => ({ authorization: `Bearer ${key}` }))
    await load(`${service.url}/v1/agents`, headers, 2)
    const pid = service.process.pid!
    const recording = await recordPerf(pid, file)
    const result = await load(`${service.url}/v1/agents`, headers)
    const summary = summarizePerf(await recording.stop(), pid)
    console.log(
      `\nperf profile of GET /v1/agents under load (${connections} connections, ${seconds} s, ${result.requests} requests; main thread, natives charged to their JavaScript caller):`
    )
    console.log(format(summary, { requests: result.requests, top: 30 }))
  } finally {
    await service.stop()
    rmSync(file, { force: true })
    rmSync(perfMapFile(service.process.pid!), { force: true })
  }
}

/** Profiles GET /v1/agents under load on a service over `env`; the keys of `setup` exist there. */
const profileRun = async (env: Record<string, string>, setup: SetUp) => {
  const dir = profileDirectory()
  const spawned = performance.now()
  const service = await startService(freshLimits(env, "profile"), {
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir.path}`]
  })
  try {
    const headers = setup.keys.map(({ key }) => ({ authorization: `Bearer ${key}` }))
    await load(`${service.url}/v1/agents`, headers, 2)
    const startedAfterMs = performance.now() - spawned
    const result = await load(`${service.url}/v1/agents`, headers)
    await service.stop()
    const file = dir.latest()
    if (file === undefined) throw new Error("no CPU profile was written")
    console.log(
      `\nCPU profile of GET /v1/agents under load (${connections} connections, ${seconds} s, ${result.requests} requests, profiler on):`
    )
    console.log(format(summarize(file, startedAfterMs), { requests: result.requests, top: 30 }))
  } finally {
    await service.stop()
    dir.done()
  }
}

// ---------------------------------------------------------------------------

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-auth-"))
const seedFile = join(dataDir, "..", `agent-platform-bench-auth-seed-${process.pid}.json`)
const embeddedEnv = { DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password }
try {
  const embeddedSetup = await backend("embedded database", embeddedEnv, (setup) => {
    writeFileSync(
      seedFile,
      JSON.stringify({
        tenantId: setup.tenantId,
        agents: setup.agents,
        keys: setup.keys.map(({ key, id }) => ({
          id,
          tenant_id: setup.tenantId,
          hash: createHash("sha256").update(key).digest("hex"),
          scopes: ["agents:read"],
          rate_limit_rpm: 100_000
        }))
      })
    )
    return { SEED_FILE: seedFile }
  })
  if (profile) await profileRun(embeddedEnv, embeddedSetup)
  if (perfProfile) await perfRun(embeddedEnv, embeddedSetup)
} finally {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(seedFile, { force: true })
}

const serverUrl = process.env.BENCH_DATABASE_URL
const redisUrl = process.env.BENCH_REDIS_URL
if (serverUrl === undefined || serverUrl === "" || redisUrl === undefined || redisUrl === "") {
  console.log("\nPostgreSQL + Redis: skipped (set BENCH_DATABASE_URL and BENCH_REDIS_URL to measure)")
} else {
  await withBenchDatabase(serverUrl, "auth", async (url, redisPrefix) => {
    const env = {
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      SESSION_SECRET: sessionSecret,
      BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password
    }
    const setup = await backend(
      "PostgreSQL + Redis",
      env,
      () => ({ DATABASE_URL: url, REDIS_URL: redisUrl }),
      await localRedisPid(redisUrl)
    )
    if (profile) await profileRun(env, setup)
    if (perfProfile) await perfRun(env, setup)
  }, redisUrl)
}
