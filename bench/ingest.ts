/**
 * Ingestion throughput: documents per second from the first POST
 * /v1/knowledge/ingest to the last document `ready` (chunked, embedded,
 * full-text indexed, its words in the agent's vocabulary on PostgreSQL), BENCH_DOCUMENTS documents of 4 KB each,
 * posted BENCH_CONCURRENCY at a time while the service's own ingestion worker
 * drains the queue. The span is read from the files' own times (`uploaded_at`
 * of the first, `processed_at` of the last), by the database's clock; the
 * documents are POSTed over node:http with keep-alive connections, which
 * keeps the bench's own share of the two cores small (its CPU per document is
 * printed with the service's).
 *
 * On real PostgreSQL when BENCH_DATABASE_URL (or TEST_DATABASE_URL) is set: a
 * database of its own is created on that server for the run and dropped
 * afterwards. Without one it says so and measures the embedded database.
 *
 * Two runs of BENCH_DOCUMENTS each, for two agents: the new process's first
 * documents, then as many again. The second is the goal's figure, as
 * bench:auth and bench:chat measure after a warm-up: over a new process's
 * first few thousand requests V8 compiles the hot paths (measured with
 * --trace-opt: 517 TurboFan compilations, 1.6 s of CPU, over its first 4,000
 * uploads), which costs a first run of 1,000 documents a fifth of the two
 * cores. Both are printed.
 *
 * The baseline is plain INSERTs of the same rows (one statement each, the
 * same concurrency, through the same driver) into a table of the same
 * database engine, measured in the same run.
 *
 * Also printed: the CPU time per document of the service process and (on
 * PostgreSQL) of the database's backends, read from /proc where there is one:
 * a figure that holds on a shared machine, where the rate does not.
 *
 * BENCH_PROFILE=1 runs the service under `node --cpu-prof` and prints its
 * self time per package and function over the measured run (BENCH_PROFILE_DIR
 * keeps the `.cpuprofile` file there, and the run's window in it is printed).
 *
 *   pnpm bench:ingest          (BENCH_DOCUMENTS=1000, BENCH_CONCURRENCY=8)
 */
import { Effect, type Layer, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { makePromiseClient, type PromiseClient } from "../packages/sdk/src/index.ts"
import { layerEmbedded, layerPostgres } from "../packages/server/src/Platform/Database.ts"
import { benchAdmin, benchRedisPrefix, cpuMs, profileDirectory, report, startService } from "./Harness.ts"
import { format, monotonicMs, sinceProfileStart, summarize } from "./ProfileSummary.ts"

const documents = Number(process.env.BENCH_DOCUMENTS ?? 1000)
/** BENCH_PROFILE=1: the service runs under `--cpu-prof`; its self time per package and function is printed. */
const profileDir = process.env.BENCH_PROFILE === "1" ? profileDirectory() : undefined
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8)
/** How many times the 2 MiB document is POSTed (each but the last deleted at once), for enough probes. */
const bigPosts = Number(process.env.BENCH_BIG_POSTS ?? 5)
const documentBytes = 4096
const sessionSecret = "bench-ingest-session-secret-0123456789abcdef"

// ---------------------------------------------------------------------------
// The documents: 4 KB of varied prose each, the same in both measurements.

const vocabulary = (
  "order refund invoice shipping delivery warehouse customer account password reset subscription plan " +
  "upgrade downgrade payment card bank transfer receipt discount coupon return exchange size colour " +
  "parcel label courier tracking delay damage warranty repair replacement manual install setup device " +
  "network printer floor office badge access holiday travel flight hotel train expense report approval " +
  "manager policy contract renewal notice period onboarding training laptop monitor keyboard support"
).split(" ")

/** A deterministic pseudo-random document of exactly `documentBytes` ASCII bytes. */
const makeDocument = (index: number): string => {
  let seed = (index + 1) * 2654435761
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  let text = `# Topic ${index}\n\n`
  while (text.length < documentBytes) {
    const words = Array.from(
      { length: 8 + Math.floor(next() * 10) },
      () => vocabulary[Math.floor(next() * vocabulary.length)]
    )
    text += `${words.join(" ")} ${index}. `
    if (next() < 0.15) text += "\n\n"
  }
  return text.slice(0, documentBytes)
}

/** GET /health every ~10 ms until told to stop, then the samples: [when it started (epoch ms), latency ms]. */
const probeScript = `
const { parentPort, workerData } = require("node:worker_threads")
let stop = false
parentPort.once("message", () => { stop = true })
;(async () => {
  const samples = []
  while (!stop) {
    const at = performance.timeOrigin + performance.now()
    const t0 = performance.now()
    await fetch(workerData.url).then((r) => r.arrayBuffer())
    samples.push([at, performance.now() - t0])
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  parentPort.postMessage(samples)
})()
`

const corpus = Array.from({ length: documents }, (_, i) => ({ filename: `doc-${i}.md`, content: makeDocument(i) }))
/** As many other documents, ingested first by the new process, for another agent. */
const firstCorpus = Array.from(
  { length: documents },
  (_, i) => ({ filename: `first-${i}.md`, content: makeDocument(documents + i) })
)

/** What one run of `documents` cost and took. */
interface RunFigures {
  /** When the run began and ended ({@link monotonicMs}): the profile's window. */
  readonly window: readonly [number, number]
  readonly postedMs: number
  readonly serviceCpuMs: number
  readonly backendsCpuMs: number
  /** The bench's own CPU meanwhile: its client posting and polling. */
  readonly benchCpuMs: number
}

/** Keep-alive connections for the documents' POSTs: node:http keeps the bench's own cost low. */
const postAgent = new Agent({ keepAlive: true, maxSockets: 64 })

/** POST /v1/knowledge/ingest with `key`; rejects unless the answer is 201. */
const postIngest = (baseUrl: string, key: string, payload: unknown) =>
  new Promise<void>((resolve, reject) => {
    const body = JSON.stringify(payload)
    const req = request(`${baseUrl}/v1/knowledge/ingest`, {
      method: "POST",
      agent: postAgent,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        authorization: `Bearer ${key}`
      }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () =>
        response.statusCode === 201 ? resolve() : reject(new Error(`ingest answered ${response.statusCode}: ${text}`)))
      response.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** Runs `task` for every item, `parallel` at a time. */
const forEachConcurrently = async <A>(
  items: ReadonlyArray<A>,
  parallel: number,
  task: (item: A, index: number) => Promise<void>
) => {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      await task(items[index], index)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
}

// ---------------------------------------------------------------------------
// The database: a new one on the PostgreSQL server, or the embedded one.

const serverUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined
const databaseName = `ap_bench_ingest_${process.pid}_${Date.now()}`
const databaseUrl = serverUrl === undefined ? undefined : (() => {
  const url = new URL(serverUrl)
  url.pathname = `/${databaseName}`
  return url.toString()
})()

/** Runs `use` against the database at `url` (PostgreSQL) or in `dataDir` (embedded). */
const withSql = <A>(
  target: { readonly url: string } | { readonly dataDir: string },
  use: Effect.Effect<A, unknown, SqlClient.SqlClient>
) =>
  Effect.runPromise(
    use.pipe(
      Effect.provide(
        "url" in target
          ? layerPostgres(Redacted.make(target.url)) as Layer.Layer<SqlClient.SqlClient, unknown>
          : layerEmbedded({ dataDir: target.dataDir }) as Layer.Layer<SqlClient.SqlClient, unknown>
      ),
      Effect.scoped
    )
  )

const onServer = (statement: string) =>
  withSql({ url: serverUrl! }, Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)))

const hasProc = existsSync("/proc/self/stat")

/** The CPU time so far of the bench database's backends (PostgreSQL only), in ms. */
const backendsCpuMs = async (): Promise<number> => {
  if (serverUrl === undefined || !hasProc) return 0
  const rows = await withSql(
    { url: serverUrl },
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ pid: number }>`
        SELECT pid FROM pg_stat_activity WHERE datname = ${databaseName} AND application_name = 'agent-platform'`)
  )
  return rows.reduce((sum, row) => sum + cpuMs(row.pid), 0)
}

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-ingest-"))
const baselineDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-ingest-baseline-"))

if (serverUrl === undefined) {
  console.log(
    "BENCH_DATABASE_URL (or TEST_DATABASE_URL) is not set: measuring on the embedded database instead of PostgreSQL."
  )
} else {
  await onServer(`CREATE DATABASE "${databaseName}"`)
}

const redisUrl = process.env.BENCH_REDIS_URL || undefined
/** This run's Redis keys (PostgreSQL + Redis only), deleted when it ends. */
const redis = benchRedisPrefix(databaseUrl === undefined ? undefined : redisUrl, "ingest")
try {
  // -------------------------------------------------------------------------
  // The platform.

  const service = await startService({
    ...(databaseUrl === undefined ? { DATA_DIR: dataDir } : { DATABASE_URL: databaseUrl }),
    ...(databaseUrl !== undefined && redisUrl !== undefined
      ? { REDIS_URL: redisUrl, REDIS_PREFIX: redis.prefix }
      : {}),
    BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
    SESSION_SECRET: sessionSecret
  }, { nodeArgs: profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir.path}`] })
  let responsiveness: {
    readonly idle: ReadonlyArray<number>
    readonly during: ReadonlyArray<number>
    readonly postMs: number
    readonly busy: ReadonlyArray<number>
    readonly readyMs: number
  } | undefined
  let platform: {
    readonly tenantId: string
    readonly agentId: string
    /** The new process's first documents. */
    readonly first: RunFigures
    /** The same number again, once V8 has compiled the hot paths: the figure of the goal. */
    readonly measured: RunFigures
  }
  const clients: Array<PromiseClient> = []
  try {
    const admin = makePromiseClient({ baseUrl: service.url })
    clients.push(admin)
    const me = await admin.auth.login({ payload: benchAdmin })
    const space = await admin.admin.createSpace({ payload: { code: "bench", name: "Bench" } })
    const agent = await admin.agentsAdmin.create({
      payload: { space_id: space.id, name: "Librarian", summary: "Answers from the bench documents", is_primary: true }
    })
    // Ingest is limited to 60 requests a minute per key and listing to 300: fresh keys for both.
    const keyClient = async (name: string) => {
      const { key } = await admin.keys.create({
        payload: { name, scopes: ["files"], space_id: space.id, rate_limit_rpm: 100_000 }
      })
      const client = makePromiseClient({ baseUrl: service.url, apiKey: key })
      clients.push(client)
      return client
    }
    const pollers: Array<PromiseClient> = []
    for (let i = 0; i < 4; i++) pollers.push(await keyClient(`bench poll ${i}`))

    /**
     * POSTs `batch` for `agentId` and polls the agent's list until every one is ready: the run's
     * figures, with the CPU time the service, its database backends and the bench spent meanwhile.
     */
    const ingestAll = async (
      agentId: string,
      batch: ReadonlyArray<{ readonly filename: string; readonly content: string }>
    ): Promise<RunFigures> => {
      // Ingest is limited to 60 requests a minute per key: a key per 50 documents.
      const ingestKeys: Array<string> = []
      for (let i = 0; i < Math.ceil(batch.length / 50); i++) {
        const { key } = await admin.keys.create({
          payload: { name: `bench ingest ${i}`, scopes: ["files"], space_id: space.id, rate_limit_rpm: 100_000 }
        })
        ingestKeys.push(key)
      }
      const servicePid = service.process.pid!
      const cpuBefore = { service: cpuMs(servicePid), backends: await backendsCpuMs(), bench: process.cpuUsage() }
      const startedAt = monotonicMs()
      const started = performance.now()
      let postedMs = 0
      const posting = forEachConcurrently(batch, concurrency, async (document, index) => {
        await postIngest(service.url, ingestKeys[Math.floor(index / 50)], { agent_id: agentId, ...document })
      }).then(() => (postedMs = performance.now() - started))
      // Every 200 ms, four keys in turn: 75 lists a minute each, well under their limit.
      let polls = 0
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        const { files } = await pollers[polls++ % pollers.length].knowledge.list({ query: { agent_id: agentId } })
        const failed = files.find((file) => file.status === "failed")
        if (failed !== undefined) throw new Error(`${failed.filename} failed: ${failed.error}`)
        if (files.length === batch.length && files.every((file) => file.status === "ready")) break
        if (performance.now() - started > 600_000) throw new Error("not every document was ready after 10 minutes")
      }
      await posting
      return {
        window: [startedAt, monotonicMs()],
        postedMs,
        serviceCpuMs: cpuMs(servicePid) - cpuBefore.service,
        benchCpuMs: (() => {
          const used = process.cpuUsage(cpuBefore.bench)
          return (used.user + used.system) / 1000
        })(),
        backendsCpuMs: (await backendsCpuMs()) - cpuBefore.backends
      }
    }

    // First the new process's first documents, for another agent of the same space; then the measured run.
    const newcomer = await admin.agentsAdmin.create({
      payload: { space_id: space.id, name: "Archivist", summary: "Reads the first documents", is_primary: false }
    })
    const first = await ingestAll(newcomer.id, firstCorpus)
    const measured = await ingestAll(agent.id, corpus)
    platform = { tenantId: me.tenant_id, agentId: agent.id, first, measured }

    // Responsiveness: GET /health latency while one 2 MiB document is ingested, against the same when idle.
    const probe = async () => {
      const t0 = performance.now()
      await fetch(`${service.url}/health`).then((r) => r.arrayBuffer())
      return performance.now() - t0
    }
    const idle: Array<number> = []
    for (let i = 0; i < 100; i++) {
      idle.push(await probe())
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const big = await keyClient("bench ingest big")
    let text = ""
    for (let i = 0; text.length < 2 * 1024 * 1024; i++) text += `${makeDocument(i).slice(0, 1000)}\n\n`
    // Probes every ~10 ms from before the POST is sent until the document is ready: a probe that started
    // before the POST returned counts for the upload, the others for the worker's processing.
    // A worker thread probes, so that the bench's own work (encoding the 2 MiB body) never delays a probe.
    const prober = new Worker(probeScript, { eval: true, workerData: { url: `${service.url}/health` } })
    const samples = new Promise<ReadonlyArray<readonly [number, number]>>((resolve, reject) => {
      prober.once("message", resolve)
      prober.once("error", reject)
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    // The upload is short: `bigPosts` of them, each but the last deleted once accepted, for enough probes.
    const postWindows: Array<readonly [number, number]> = []
    const postMsEach: Array<number> = []
    const epochNow = () => performance.timeOrigin + performance.now()
    let file_id = ""
    for (let i = 0; i < bigPosts; i++) {
      const sent = epochNow()
      const accepted = await big.knowledge.ingest({
        payload: { agent_id: agent.id, filename: `big-${i}.md`, content: text.slice(0, 2 * 1024 * 1024) }
      })
      const returned = epochNow()
      postWindows.push([sent, returned])
      postMsEach.push(returned - sent)
      file_id = accepted.file_id
      if (i < bigPosts - 1) {
        await big.knowledge.delete({ params: { id: file_id } })
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const bigStarted = performance.now()
    const postReturnedAt = epochNow()
    const postMs = Math.max(...postMsEach)
    try {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 500))
        const { files } = await pollers[0].knowledge.list({ query: { agent_id: agent.id } })
        const status = files.find((file) => file.id === file_id)?.status
        if (status === "ready" || status === "failed") break
        if (performance.now() - bigStarted > 600_000) {
          throw new Error("the 2 MiB document was not ready after 10 minutes")
        }
      }
    } finally {
      prober.postMessage("stop")
    }
    // A probe that started during a POST counts for the upload, one after the last for the processing.
    const during = (await samples).filter(([at]) => postWindows.some(([from, to]) => at >= from && at < to))
      .map(([, latency]) => latency)
    const busy = (await samples).filter(([at]) => at >= postReturnedAt).map(([, latency]) => latency)
    await prober.terminate()
    responsiveness = { idle, during, postMs, busy, readyMs: performance.now() - bigStarted }
  } finally {
    await Promise.all(clients.map((client) => client.dispose()))
    await service.stop()
  }

  // From the first document's upload to the last one's ready, by the database's own clock: to the
  // millisecond, where the bench's polling (every 200 ms) would round a run of two seconds by 10 %.
  const serviceTarget = databaseUrl === undefined ? { dataDir } : { url: databaseUrl }
  const spanOf = (prefix: string) =>
    withSql(
      serviceTarget,
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ readonly total_ms: number; readonly after_last_upload_ms: number }>`
          SELECT (EXTRACT(EPOCH FROM max(processed_at) - min(uploaded_at)) * 1000)::float8 AS total_ms,
            (EXTRACT(EPOCH FROM max(processed_at) - max(uploaded_at)) * 1000)::float8 AS after_last_upload_ms
          FROM knowledge_files WHERE filename LIKE ${`${prefix}-%`} AND status = 'ready'`
      )
    ).then(([span]) => span)
  const spans = { first: await spanOf("first"), measured: await spanOf("doc") }

  // -------------------------------------------------------------------------
  // The baseline: plain INSERTs of the same rows, on the same engine.

  const baselineTarget = databaseUrl === undefined ? { dataDir: baselineDir } : { url: databaseUrl }
  const baselineMs = await withSql(
    baselineTarget,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE bench_plain_documents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL,
        agent_id uuid NOT NULL,
        filename text NOT NULL,
        content text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        size_bytes integer NOT NULL,
        uploaded_at timestamptz NOT NULL DEFAULT now()
      )`
      const started = performance.now()
      yield* Effect.forEach(
        corpus,
        (document) =>
          sql`INSERT INTO bench_plain_documents (tenant_id, agent_id, filename, content, size_bytes)
              VALUES (${platform.tenantId}, ${platform.agentId}, ${document.filename}, ${document.content}, ${documentBytes})`,
        { concurrency, discard: true }
      )
      return performance.now() - started
    })
  )

  const backend = databaseUrl === undefined ? "embedded database" : "PostgreSQL"
  const insertRate = documents / (baselineMs / 1000)
  const rateOf = (span: { readonly total_ms: number }) => documents / (span.total_ms / 1000)
  report(
    `baseline: plain INSERTs of the same rows, ${backend}`,
    `${insertRate.toFixed(0)} rows/s  (${documents} rows, ${concurrency} at a time, ${
      (baselineMs / 1000).toFixed(2)
    } s)`
  )
  const reportRun = (label: string, span: typeof spans.first, figures: RunFigures) => {
    report(
      label,
      `${rateOf(span).toFixed(1)} documents/s  (${documents} documents, ${concurrency} at a time, ${
        (span.total_ms / 1000).toFixed(2)
      } s; ${(rateOf(span) / insertRate).toFixed(3)}x baseline)`
    )
    if (hasProc) {
      const perDocument = (ms: number) => `${(ms / documents * 1000).toFixed(0)} µs`
      report(
        "  CPU per document (posting, polling and processing)",
        `service ${perDocument(figures.serviceCpuMs)}${
          serverUrl === undefined ?
            " (the embedded database included)" :
            `, PostgreSQL backends ${perDocument(figures.backendsCpuMs)}`
        }; the bench's own client ${perDocument(figures.benchCpuMs)}`
      )
    }
    report(
      "  of which posting them all (201 pending)",
      `${(figures.postedMs / 1000).toFixed(1)} s  (${(documents / (figures.postedMs / 1000)).toFixed(0)} requests/s)`
    )
    // When posting is the bottleneck the worker keeps up with it: the queue drains soon after the last POST.
    report("  the last document ready after the last upload", `${(span.after_last_upload_ms / 1000).toFixed(2)} s`)
  }
  reportRun(
    `ingest to ready, a new process's first ${documents} 4 KB documents, ${backend}`,
    spans.first,
    platform.first
  )
  reportRun(`ingest to ready, the next ${documents} 4 KB documents, ${backend}`, spans.measured, platform.measured)
  if (responsiveness !== undefined) {
    const pct = (values: ReadonlyArray<number>, p: number) =>
      [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]
    const { busy, during, idle, postMs, readyMs } = responsiveness
    const latencies = (values: ReadonlyArray<number>) =>
      values.length === 0 ?
        "no probe" :
        `${pct(values, 0.5).toFixed(1)} / ${pct(values, 0.99).toFixed(1)} / ${
          Math.max(...values).toFixed(1)
        } ms  (p50 / p99 / max, ${values.length} probes; goal max <= 100 ms)`
    report("baseline: GET /health latency, idle (p50 / p99 / max)", latencies(idle).replace(/;.*\)$/u, ")"))
    report(
      `GET /health while 2 MiB are POSTed (${bigPosts} POSTs, <= ${postMs.toFixed(0)} ms to 201)`,
      latencies(during)
    )
    report(`GET /health while 2 MiB are processed (${(readyMs / 1000).toFixed(1)} s to ready)`, latencies(busy))
  }
  if (profileDir !== undefined) {
    const path = profileDir.latest()
    if (path !== undefined) {
      const [from, until] = platform.measured.window.map((at) => sinceProfileStart(path, at))
      console.log(
        `\nCPU profile of the service over the measured run (the next ${documents} documents${
          profileDir.kept ? `; ${from.toFixed(0)}–${until.toFixed(0)} ms after the start of ${path}` : ""
        }):`
      )
      console.log(format(summarize(path, from, until), { top: 30 }))
    }
  }
} finally {
  profileDir?.done()
  if (serverUrl !== undefined) await onServer(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`)
  await redis.drop()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(baselineDir, { recursive: true, force: true })
}
