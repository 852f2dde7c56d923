/**
 * Chat streaming on the embedded model and the embedded database: time to the
 * first SSE event and tokens per second of POST /v1/chat/completions, over
 * BENCH_CHATS new chats run one after another and BENCH_CONCURRENCY at a
 * time. Every chat asks a question answered in an ingested document, so each
 * turn routes, retrieves and answers with its source cited.
 *
 * Then the burst: BENCH_BURST (200) chats started at once, each from its own
 * connection (the goal: the first event of every one within 100 ms, p99),
 * BENCH_ROUNDS (3) times, each right after a burst on the bare server.
 * A burst of 200 streams from one address needs MAX_CONNECTIONS_PER_IP above
 * its default of 128; the bench raises it, as a deployment expecting that
 * many streams per client address would.
 *
 * Also printed: the service's CPU time per chat from each burst's start to
 * its last first event (from /proc), what opening a chat costs in a burst:
 * a figure the shared machine's load moves less than the p99.
 *
 * The baseline is a bare node:http server that streams the same number of
 * `data:` events (an agent_info, the tokens, `[DONE]`) as fast as it can,
 * measured the same way in the same run: the ratios are what the platform
 * costs over the transport. Figures for the embedded database, and for
 * PostgreSQL + Redis when BENCH_DATABASE_URL (and BENCH_REDIS_URL) are set.
 * BENCH_PROFILE=1 profiles the embedded service during the bursts
 * (`node --cpu-prof`) and prints self time per package and function: over
 * all of them, then for each burst from its start to its last first event
 * (BENCH_PROFILE_DIR keeps the `.cpuprofile` file there, and each burst's
 * window in it is printed).
 * BENCH_FRESH_CONNECTIONS=1 opens new connections for every burst (200
 * clients of their own) instead of reusing the last burst's; BENCH_WARMUP
 * chats, one at a time, warm the service before anything is measured, and
 * BENCH_FIRST_BURSTS bursts (each after one of the bare server's) come before
 * the measured ones: the goal is the warm service's, as in bench:auth and
 * bench:ingest, and the new process's first burst is printed apart.
 *
 *   pnpm bench:chat            (BENCH_CHATS=30, BENCH_CONCURRENCY=8, BENCH_BURST=200, BENCH_WARMUP=10,
 *                               BENCH_FIRST_BURSTS=1, BENCH_ROUNDS=3)
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makePromiseClient } from "../packages/sdk/src/index.ts"
import { benchAdmin, cpuMs, freePort, profileDirectory, report, startService, withBenchDatabase } from "./Harness.ts"
import { format, monotonicMs, sinceProfileStart, summarize } from "./ProfileSummary.ts"

const chats = Number(process.env.BENCH_CHATS ?? 30)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8)
/** The burst: this many chats started at once (goal: first event p99 <= 100 ms). */
const burst = Number(process.env.BENCH_BURST ?? 200)
/** Bursts measured, each after one of the bare server's. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const warmup = Number(process.env.BENCH_WARMUP ?? 10)
/**
 * Bursts run before the measured ones (on both servers, in the same pairs) and
 * printed apart: a new process's first burst of 200 chats pays V8's compiling
 * of the paths that only concurrent chats take, which the chats one and eight
 * at a time do not warm.
 */
const firstBursts = Number(process.env.BENCH_FIRST_BURSTS ?? 1)
const profile = process.env.BENCH_PROFILE === "1"
const question = "How long does it take to get my refund?"
const refundPolicy = [
  "# Returns and refunds",
  "",
  "Customers may return any unused item within 30 days of delivery. Items must be in their original packaging.",
  "",
  "Refunds are processed within 14 business days after the returned item reaches our warehouse.",
  "",
  "Exchanges for a different size or colour are free of charge; the shipping label is included in the parcel."
].join("\n")

// ---------------------------------------------------------------------------
// One chat, measured from the request to the first event, and to `[DONE]`.

interface Stream {
  readonly firstEventMs: number
  readonly totalMs: number
  readonly tokens: number
}

/** Keep-alive connections, as a chat client holds them; node:http keeps the client's own cost low. */
let httpAgent = new Agent({ keepAlive: true, maxSockets: 256 })

/**
 * BENCH_FRESH_CONNECTIONS=1: every burst (the bare server's too) opens new
 * connections, as 200 different clients would, instead of reusing those of
 * the burst before.
 */
const freshConnections = process.env.BENCH_FRESH_CONNECTIONS === "1"

const burstConnections = () => {
  if (!freshConnections) return
  httpAgent.destroy()
  httpAgent = new Agent({ keepAlive: true, maxSockets: 256 })
}

/** POSTs a chat and reads its SSE frames; the same code measures the baseline and the platform. */
const measureChat = (url: string, key: string, onFirstEvent?: () => void): Promise<Stream> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({ message: question })
    const started = performance.now()
    const req = request(`${url}/v1/chat/completions`, {
      method: "POST",
      agent: httpAgent,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        accept: "text/event-stream",
        authorization: `Bearer ${key}`
      }
    }, (response) => {
      response.setEncoding("utf8")
      let buffer = ""
      let firstEventMs = -1
      let tokens = 0
      let done = false
      if (response.statusCode !== 200) {
        response.on("data", (chunk: string) => (buffer += chunk))
        response.on("end", () => reject(new Error(`chat answered ${response.statusCode}: ${buffer}`)))
        return
      }
      response.on("data", (chunk: string) => {
        buffer += chunk
        let end: number
        while (!done && (end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (!frame.startsWith("data: ")) continue
          if (firstEventMs < 0) {
            firstEventMs = performance.now() - started
            onFirstEvent?.()
          }
          const data = frame.slice(6)
          if (data === "[DONE]") {
            done = true
            resolve({ firstEventMs, totalMs: performance.now() - started, tokens })
            continue
          }
          const event = JSON.parse(data) as { text?: unknown; type?: string; error?: string }
          if (event.type === "error") reject(new Error(`the chat failed: ${event.error}`))
          if (typeof event.text === "string") tokens++
        }
      })
      response.on("end", () => done || reject(new Error("the stream ended without [DONE]")))
      response.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

interface Run {
  readonly streams: ReadonlyArray<Stream>
  readonly wallMs: number
}

/** `count` chats, `parallel` at a time, each with the next key; `onFirstEvent` runs as each gets its first event. */
const runChats = async (
  url: string,
  nextKey: () => string,
  count: number,
  parallel: number,
  onFirstEvent?: () => void
): Promise<Run> => {
  const streams: Array<Stream> = []
  let started = 0
  const t0 = performance.now()
  const worker = async () => {
    while (started < count) {
      started++
      streams.push(await measureChat(url, nextKey(), onFirstEvent))
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return { streams, wallMs: performance.now() - t0 }
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

interface Figures {
  readonly firstP50: number
  readonly firstP95: number
  readonly firstP99: number
  /** Tokens per second of one stream, from the request to `[DONE]` (median). */
  readonly perStream: number
  /** Tokens per second over the whole run: all tokens over the wall-clock time. */
  readonly aggregate: number
  readonly tokensPerChat: number
}

const figures = (run: Run): Figures => ({
  firstP50: percentile(run.streams.map((s) => s.firstEventMs), 50),
  firstP95: percentile(run.streams.map((s) => s.firstEventMs), 95),
  firstP99: percentile(run.streams.map((s) => s.firstEventMs), 99),
  perStream: percentile(run.streams.map((s) => s.tokens / (s.totalMs / 1000)), 50),
  aggregate: run.streams.reduce((sum, s) => sum + s.tokens, 0) / (run.wallMs / 1000),
  tokensPerChat: run.streams.reduce((sum, s) => sum + s.tokens, 0) / run.streams.length
})

// ---------------------------------------------------------------------------
// The platform: one space, agent and document, chats over fresh keys.

interface PlatformFigures {
  readonly sequential: Figures
  readonly concurrent: Figures
  readonly burst: Figures
  /** The first event's p99 of each burst. */
  readonly burstP99s: ReadonlyArray<number>
  /** The first event's p99 of each burst before the measured ones (a new process's first). */
  readonly firstBurstP99s: ReadonlyArray<number>
  /**
   * The service's CPU time per chat from each measured burst's start to its
   * last first event (from /proc, in 10 ms ticks): what opening a chat costs
   * when 200 open at once, steadier than the p99 on a shared machine.
   */
  readonly burstOpeningCpuUs?: ReadonlyArray<number>
}

interface Measured {
  readonly platform: PlatformFigures
  /** The bare server's, measured right before the platform's: the same load on the machine. */
  readonly bare: PlatformFigures
}

/**
 * Sets up a service over `env` and warms it; then measures the bare server
 * streaming as many tokens as the platform's answers, and the platform:
 * chats one at a time, a few at a time, and the burst.
 */
const platform = async (label: string, env: Record<string, string>): Promise<Measured> => {
  const profileDir = profile && env.DATABASE_URL === undefined ? profileDirectory() : undefined
  const service = await startService(
    {
      BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
      SESSION_SECRET: "bench-chat-session-secret-0123456789abcdef",
      MAX_CONNECTIONS_PER_IP: String(burst + 56),
      ...env
    },
    profileDir === undefined ? {} : { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profileDir.path}`] }
  )
  // The profile starts with the process, `healthyAfterMs` before startService returned.
  const spawned = performance.now() - service.healthyAfterMs
  try {
    const admin = makePromiseClient({ baseUrl: service.url })
    await admin.auth.login({ payload: benchAdmin })
    const space = await admin.admin.createSpace({ payload: { code: "bench", name: "Bench" } })
    const agent = await admin.agentsAdmin.create({
      payload: {
        space_id: space.id,
        name: "Support",
        summary: "Customer support: orders, returns and refunds",
        is_primary: true
      }
    })
    // Chat is limited to 60 requests a minute per key: a new key for every 50 chats.
    const total = warmup + 2 * chats + (firstBursts + rounds) * burst
    const keys: Array<string> = []
    for (let i = 0; i < Math.ceil(total / 50) + 1; i++) {
      const created = await admin.keys.create({
        payload: { name: `bench ${i}`, scopes: ["chat", "files"], space_id: space.id, rate_limit_rpm: 100_000 }
      })
      keys.push(created.key)
    }
    let used = 0
    const nextKey = () => keys[Math.floor(used++ / 50)]

    const keyClient = makePromiseClient({ baseUrl: service.url, apiKey: keys.at(-1)! })
    const accepted = await keyClient.knowledge.ingest({
      payload: { agent_id: agent.id, filename: "refunds.md", content: refundPolicy }
    })
    for (;;) {
      const { files } = await keyClient.knowledge.list({ query: { agent_id: agent.id } })
      const file = files.find((f) => f.id === accepted.file_id)
      if (file?.status === "ready") break
      if (file?.status === "failed") throw new Error(`ingestion failed: ${file.error}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await keyClient.dispose()
    await admin.dispose()

    // Warm the JIT and the caches as a running service would be; the answer's length sizes the baseline.
    const tokensPerChat = Math.round(figures(await runChats(service.url, nextKey, warmup, 1)).tokensPerChat)
    if (tokensPerChat === 0) throw new Error("the embedded model answered without tokens")
    const bareServer = await startBareServer(tokensPerChat)
    let bare: PlatformFigures
    let measured: PlatformFigures
    let burstStartedMs: number
    /** From each burst's start to its last first event ({@link monotonicMs}): what the slowest waited for. */
    const burstWindows: Array<readonly [number, number]> = []
    try {
      await runChats(bareServer.url, () => "none", warmup, 1)
      const bareSequential = figures(await runChats(bareServer.url, () => "none", chats, 1))
      const bareConcurrent = figures(await runChats(bareServer.url, () => "none", chats, concurrency))
      const sequential = figures(await runChats(service.url, nextKey, chats, 1))
      const concurrent = figures(await runChats(service.url, nextKey, chats, concurrency))
      // Bursts alternate with the bare server's: the load on the machine moves, the pairs see the same.
      burstStartedMs = performance.now() - spawned
      const together = (runs: ReadonlyArray<Run>): Run => ({
        streams: runs.flatMap((run) => run.streams),
        wallMs: runs.reduce((sum, run) => sum + run.wallMs, 0)
      })
      const bareBursts: Array<Run> = []
      const bursts: Array<Run> = []
      const openingCpuUs: Array<number> = []
      for (let round = 0; round < firstBursts + rounds; round++) {
        burstConnections()
        bareBursts.push(await runChats(bareServer.url, () => "none", burst, burst))
        burstConnections()
        const startedAt = monotonicMs()
        const pid = service.process.pid!
        const cpuAtStart = cpuMs(pid)
        let firstEvents = 0
        let cpuAtLastFirst = cpuAtStart
        const run = await runChats(service.url, nextKey, burst, burst, () => {
          if (++firstEvents === burst) cpuAtLastFirst = cpuMs(pid)
        })
        openingCpuUs.push(((cpuAtLastFirst - cpuAtStart) * 1000) / burst)
        bursts.push(run)
        burstWindows.push([startedAt, startedAt + Math.max(...run.streams.map((s) => s.firstEventMs))])
      }
      const p99s = (runs: ReadonlyArray<Run>) => runs.map((run) => figures(run).firstP99)
      bare = {
        sequential: bareSequential,
        concurrent: bareConcurrent,
        burst: figures(together(bareBursts.slice(firstBursts))),
        burstP99s: p99s(bareBursts.slice(firstBursts)),
        firstBurstP99s: p99s(bareBursts.slice(0, firstBursts))
      }
      measured = {
        sequential,
        concurrent,
        burst: figures(together(bursts.slice(firstBursts))),
        burstP99s: p99s(bursts.slice(firstBursts)),
        burstOpeningCpuUs: openingCpuUs.slice(firstBursts),
        firstBurstP99s: p99s(bursts.slice(0, firstBursts))
      }
    } finally {
      bareServer.stop()
    }
    await service.stop()
    if (profileDir !== undefined) {
      const path = profileDir.latest()
      if (path === undefined) throw new Error("no CPU profile was written")
      if (profileDir.kept) console.log(`\nCPU profile kept: ${path}`)
      console.log(`\nCPU profile of the service during the burst of ${burst} chats (${label}, profiler on):`)
      console.log(
        format(summarize(path, burstStartedMs), { requests: (firstBursts + rounds) * burst, top: 30 })
      )
      for (const [round, [from, until]] of burstWindows.entries()) {
        console.log(
          `\nCPU profile of burst ${round + 1}${
            round < firstBursts ? " (before the measured ones)" : ""
          } until its last first event (${(until - from).toFixed(0)} ms, ${label}):`
        )
        const [fromMs, untilMs] = [sinceProfileStart(path, from), sinceProfileStart(path, until)]
        if (profileDir.kept) {
          console.log(`(${fromMs.toFixed(0)}–${untilMs.toFixed(0)} ms after the profile's start)`)
        }
        console.log(
          format(summarize(path, fromMs, untilMs), {
            requests: burst,
            top: 30
          })
        )
      }
    }
    return { platform: measured, bare }
  } finally {
    await service.stop()
    profileDir?.done()
  }
}

// ---------------------------------------------------------------------------
// The baseline: the same frames from a bare node:http server.

/** A bare node:http server streaming an agent_info, `tokens` text events and `[DONE]`. */
const startBareServer = async (tokens: number) => {
  const port = await freePort()
  const child = spawn(process.execPath, [
    "-e",
    `
    const words = ${JSON.stringify(Array.from({ length: tokens }, (_, i) => `word${i} `))}
    require("node:http").createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-chat-id": "c" })
        res.write("data: " + JSON.stringify({ type: "agent_info", agent_id: "a", chat_id: "c" }) + "\\n\\n")
        for (const text of words) res.write("data: " + JSON.stringify({ text }) + "\\n\\n")
        res.end("data: [DONE]\\n\\n")
      })
    }).listen(${port}, "127.0.0.1")`
  ])
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (await fetch(url).then((r) => r.arrayBuffer().then(() => true), () => false)) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return { url, stop: () => child.kill() }
}

// ---------------------------------------------------------------------------

const ratio = (value: number, base: number) => `${(value / base).toFixed(value / base >= 10 ? 0 : 2)}x baseline`

const show = (label: string, measured: Figures, bare: Figures) => {
  report(
    `  ${label}: first SSE event, p50 / p95`,
    `${measured.firstP50.toFixed(1)} ms / ${measured.firstP95.toFixed(1)} ms  (p50 ${
      ratio(measured.firstP50, bare.firstP50)
    })`
  )
  report(
    `  ${label}: tokens/s per stream (median)`,
    `${measured.perStream.toFixed(0)}  (${ratio(measured.perStream, bare.perStream)})`
  )
  report(
    `  ${label}: tokens/s over all streams`,
    `${measured.aggregate.toFixed(0)}  (${ratio(measured.aggregate, bare.aggregate)})`
  )
}

const showBare = (label: string, bare: Figures) =>
  report(
    `  ${label}`,
    `first event p50 ${bare.firstP50.toFixed(2)} ms, p99 ${bare.firstP99.toFixed(2)} ms; ${
      bare.perStream.toFixed(0)
    } tokens/s per stream, ${bare.aggregate.toFixed(0)} over all`
  )

const showPlatform = (label: string, { bare, platform: measured }: Measured) => {
  const tokens = measured.sequential.tokensPerChat
  console.log(`baseline for ${label}: bare node:http SSE server, ${tokens.toFixed(0)} text events per stream`)
  showBare(`${chats} streams, one at a time`, bare.sequential)
  showBare(`${chats} streams, ${concurrency} at a time`, bare.concurrent)
  showBare(`${burst} streams at once (${rounds} bursts)`, bare.burst)
  console.log(`platform, ${label}: embedded model, ${tokens.toFixed(0)} tokens per answer`)
  show(`${chats} chats, one at a time`, measured.sequential, bare.sequential)
  show(`${chats} chats, ${concurrency} at a time`, measured.concurrent, bare.concurrent)
  report(
    `  ${burst} chats at once (${rounds} bursts): first SSE event, p50 / p95`,
    `${measured.burst.firstP50.toFixed(1)} ms / ${measured.burst.firstP95.toFixed(1)} ms  (p50 ${
      ratio(measured.burst.firstP50, bare.burst.firstP50)
    })`
  )
  report(
    `  ${burst} chats at once: tokens/s over all streams`,
    `${measured.burst.aggregate.toFixed(0)}  (${ratio(measured.burst.aggregate, bare.burst.aggregate)})`
  )
  report(
    `  ${burst} chats at once: first SSE event p99 (goal <= 100 ms)`,
    `${measured.burst.firstP99.toFixed(1)} ms  (${ratio(measured.burst.firstP99, bare.burst.firstP99)}; bare ${
      bare.burst.firstP99.toFixed(1)
    } ms)`
  )
  const pairs = (p99s: ReadonlyArray<number>, bareP99s: ReadonlyArray<number>) =>
    p99s.map((p99, i) => `${p99.toFixed(0)} / ${bareP99s[i].toFixed(0)} ms (${(p99 / bareP99s[i]).toFixed(2)}x)`)
      .join(", ")
  report(`  each burst: p99 / the bare burst's right before`, pairs(measured.burstP99s, bare.burstP99s))
  if (measured.burstOpeningCpuUs !== undefined && measured.burstOpeningCpuUs.length > 0) {
    report(
      `  each burst: the service's CPU per chat until its last first event`,
      measured.burstOpeningCpuUs.map((us) => `${us.toFixed(0)} µs`).join(", ")
    )
  }
  if (firstBursts > 0) {
    report(
      `  before them, the new process's first burst${firstBursts > 1 ? "s" : ""} (not in the goal)`,
      pairs(measured.firstBurstP99s, bare.firstBurstP99s)
    )
  }
}

const uptime = async () => {
  const { readFile } = await import("node:fs/promises")
  return (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ")
}

try {
  console.log(`load average before the run: ${await uptime()}`)
  const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-chat-"))
  try {
    showPlatform("embedded database", await platform("embedded database", { DATA_DIR: dataDir }))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  const serverUrl = process.env.BENCH_DATABASE_URL
  if (serverUrl === undefined || serverUrl === "") {
    console.log("PostgreSQL: skipped (set BENCH_DATABASE_URL, and BENCH_REDIS_URL, to measure)")
  } else {
    const redisUrl = process.env.BENCH_REDIS_URL
    const measured = await withBenchDatabase(serverUrl, "chat", (url, redisPrefix) =>
      platform("PostgreSQL", {
        DATABASE_URL: url,
        ...(redisUrl === undefined || redisUrl === "" ? {} : {
          REDIS_URL: redisUrl,
          REDIS_PREFIX: redisPrefix
        })
      }), redisUrl)
    showPlatform(`PostgreSQL${redisUrl ? " + Redis" : ""}`, measured)
  }
  console.log(`load average after the run: ${await uptime()}`)
} finally {
  httpAgent.destroy()
}
