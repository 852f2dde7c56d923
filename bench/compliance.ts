/**
 * The compliance pack at a million rows, on real PostgreSQL:
 *
 * 1. integrity — GET /api/compliance/integrity re-hashing an `audit_logs`
 *    chain of BENCH_ROWS (default 1,000,000) entries, in batches;
 * 2. export — GET /api/compliance/export?format=csv streaming BENCH_ROWS
 *    provenance rows (keyset pages → csv-stringify → HTTP), read to the end.
 *
 * Each is reported in rows per second and the service's peak RSS while it ran
 * (sampled from /proc every 20 ms), against the same rows read by
 * `COPY (...) TO STDOUT` through psql in the same run: the floor of reading
 * them out of PostgreSQL at all. The rows are seeded directly (COPY FROM
 * STDIN), with valid hashes, into a database created for the run and dropped
 * after it.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm bench:compliance
 *
 * BENCH_ROWS sets the row count; BENCH_NODE_ARGS passes flags to the
 * service's node (e.g. `--trace-gc`, written to the service's log).
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { entryHash, genesisHash } from "../packages/server/src/Audit/AuditLog.ts"
import { benchAdmin, report, startService } from "./Harness.ts"

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000)
const serverUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL ||
  "postgres://postgres@127.0.0.1:5432/postgres"
const databaseName = `ap_bench_compliance_${process.pid}_${Date.now()}`
const databaseUrl = (() => {
  const url = new URL(serverUrl)
  url.pathname = `/${databaseName}`
  return url.toString()
})()

/** Runs psql against `url` with `args`; `input` is written to its standard input; resolves with stdout's size and the time taken. */
const psql = (
  url: string,
  args: ReadonlyArray<string>,
  input?: (write: (chunk: string) => Promise<void>) => Promise<void>
) =>
  new Promise<{ readonly bytes: number; readonly ms: number; readonly stdout: string }>((resolve, reject) => {
    const started = performance.now()
    const child = spawn("psql", [url, "-X", "-q", "-v", "ON_ERROR_STOP=1", ...args], {
      stdio: ["pipe", "pipe", "pipe"]
    })
    let bytes = 0
    let head = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      if (head.length < 4096) head += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("close", (code) =>
      code === 0
        ? resolve({ bytes, ms: performance.now() - started, stdout: head })
        : reject(new Error(`psql exited ${code}: ${stderr}`)))
    const write = (chunk: string) =>
      new Promise<void>((done) => (child.stdin.write(chunk) ? done() : child.stdin.once("drain", () => done())))
    void (input === undefined ? Promise.resolve() : input(write)).then(() => child.stdin.end())
  })

const query = async (url: string, sql: string) => (await psql(url, ["-A", "-t", "-c", sql])).stdout.trim()

/** Samples the process's resident set every 20 ms; `stop` returns the peak in MiB. */
const rssSampler = (pid: number) => {
  let peak = 0
  const sample = () => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
      if (match !== null) peak = Math.max(peak, Number(match[1]) / 1024)
    } catch {
      // the process is gone
    }
  }
  sample()
  const timer = setInterval(sample, 20)
  return { stop: () => (clearInterval(timer), sample(), peak) }
}

/** The process's resident set now, in MiB. */
const rssNow = (pid: number) => {
  const sampler = rssSampler(pid)
  return sampler.stop()
}

const rate = (count: number, ms: number) => `${Math.round(count / (ms / 1000)).toLocaleString("en-US")} rows/s`

await query(serverUrl, `CREATE DATABASE "${databaseName}"`)
const service = await startService({
  DATABASE_URL: databaseUrl,
  BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
  SESSION_SECRET: "bench-compliance-session-secret-0123456789",
  LOG_LEVEL: "Error"
})
if (process.env.BENCH_NODE_ARGS) console.log(`service log: ${service.logFile} (BENCH_KEEP_LOGS=1 keeps it)`)
try {
  // -------------------------------------------------------------------------
  // Sign in, turn the pack on.
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(benchAdmin)
  })
  const session = await login.json() as { tenant_id: string }
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]
  await fetch(`${service.url}/api/admin/tenant/flags`, {
    method: "PUT",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ feature_compliance_pack: true })
  })
  const tenantId = session.tenant_id

  // -------------------------------------------------------------------------
  // Seed: the audit chain continued to `rows` entries with valid hashes, and `rows` executions.
  console.log(`seeding ${rows.toLocaleString("en-US")} audit entries and executions in ${databaseName}...`)
  const seedStarted = performance.now()
  const [lastSeq, lastHash] = (await query(
    databaseUrl,
    `SELECT seq || '|' || hash FROM audit_logs WHERE tenant_id = '${tenantId}' ORDER BY seq DESC LIMIT 1`
  ) || `0|${genesisHash}`).split("|")
  const existing = Number(lastSeq)
  const base = Date.now() - 5 * 86_400_000
  await psql(databaseUrl, [
    "-c",
    "\\copy audit_logs (id, tenant_id, seq, event, actor, target, data, ip, created_at, prev_hash, hash) FROM STDIN"
  ], async (write) => {
    let prevHash = lastHash
    let buffer = ""
    for (let i = 1; i <= rows - existing; i++) {
      const row = {
        id: crypto.randomUUID(),
        tenant_id: tenantId,
        seq: existing + i,
        event: "action.executed",
        actor: "key:bench",
        target: "action:bench",
        data: { n: i, ok: true },
        ip: null,
        created_at: new Date(base + i)
      }
      const hash = entryHash(prevHash, row)
      buffer += `${row.id}\t${tenantId}\t${row.seq}\t${row.event}\t${row.actor}\t${row.target}\t${
        JSON.stringify(row.data)
      }\t\\N\t${row.created_at.toISOString()}\t${prevHash}\t${hash}\n`
      prevHash = hash
      if (buffer.length > 1 << 20) {
        await write(buffer)
        buffer = ""
      }
    }
    await write(buffer)
  })
  await query(
    databaseUrl,
    `
    WITH action AS (
      INSERT INTO actions (tenant_id, name, description, http_method, url) VALUES ('${tenantId}', 'bench_action', 'Bench', 'POST', 'https://example.invalid/x')
      RETURNING id
    )
    INSERT INTO action_executions (tenant_id, action_id, action_name, caller_kind, caller_id, params_digest, status_code, success,
      duration_ms, supervision, channel, trigger_type, trigger_id, trigger_name, on_behalf_type, on_behalf_id, on_behalf_name,
      confirmed_by_user_id, confirmed_by_name, confirmation_text, confirmation_asked, confirmed_at, hitl_version, hitl_mode, created_at)
    SELECT '${tenantId}', action.id, 'bench_action', 'key', 'bench', md5(g::text), 200, true, 12,
      CASE WHEN g % 3 = 0 THEN 'human_confirmed' ELSE 'autonomous' END, 'chat', 'agent', gen_random_uuid()::text, 'Helper',
      'user', gen_random_uuid()::text, 'Ana, "the reviewer"',
      CASE WHEN g % 3 = 0 THEN gen_random_uuid() END, CASE WHEN g % 3 = 0 THEN 'Ana' END,
      CASE WHEN g % 3 = 0 THEN E'yes, go ahead\\n=1+1' END, CASE WHEN g % 3 = 0 THEN 'Please confirm: run bench_action?' END,
      CASE WHEN g % 3 = 0 THEN now() END, 1, 'auto',
      now() - interval '5 days' + g * interval '1 millisecond'
    FROM action, generate_series(1, ${rows}) AS g`
  )
  await query(databaseUrl, "VACUUM ANALYZE audit_logs")
  await query(databaseUrl, "VACUUM ANALYZE action_executions")
  report("seeding (not measured)", `${((performance.now() - seedStarted) / 1000).toFixed(1)} s`)

  // -------------------------------------------------------------------------
  // 1. Integrity: the service's verifier against COPY of the same chain.
  const idleRss = rssNow(service.process.pid!)
  report("service RSS idle, before integrity", `${idleRss.toFixed(0)} MiB`)
  const integritySampler = rssSampler(service.process.pid!)
  const integrityStarted = performance.now()
  const integrity = await (await fetch(`${service.url}/api/compliance/integrity`, { headers: { cookie } })).json() as {
    valid: boolean
    audit_logs: { entries_checked: number; valid: boolean }
  }
  const integrityMs = performance.now() - integrityStarted
  const integrityPeak = integritySampler.stop()
  if (!integrity.audit_logs.valid || integrity.audit_logs.entries_checked < rows) {
    throw new Error(`the seeded chain did not verify: ${JSON.stringify(integrity)}`)
  }
  const copyChain = await psql(databaseUrl, [
    "-c",
    `COPY (SELECT id, tenant_id, seq, event, actor, target, data, ip, created_at, prev_hash, hash FROM audit_logs WHERE tenant_id = '${tenantId}' ORDER BY seq) TO STDOUT`
  ])
  const checked = integrity.audit_logs.entries_checked
  report(
    `integrity: ${checked.toLocaleString("en-US")} entries re-hashed`,
    `${(integrityMs / 1000).toFixed(1)} s, ${rate(checked, integrityMs)}`
  )
  report("integrity: service peak RSS", `${integrityPeak.toFixed(0)} MiB`)
  report(
    "baseline: COPY (same rows) TO STDOUT via psql",
    `${(copyChain.ms / 1000).toFixed(1)} s, ${rate(checked, copyChain.ms)}`
  )
  report("integrity ÷ COPY (time)", `${(integrityMs / copyChain.ms).toFixed(1)}×`)

  // -------------------------------------------------------------------------
  // 2. Export: the streamed CSV against COPY of the same provenance rows as CSV.
  const beforeExport = rssNow(service.process.pid!)
  report("service RSS before export", `${beforeExport.toFixed(0)} MiB`)
  const exportSampler = rssSampler(service.process.pid!)
  const exportStarted = performance.now()
  const response = await fetch(`${service.url}/api/compliance/export?format=csv`, { headers: { cookie } })
  if (response.status !== 200 || response.body === null) throw new Error(`export answered ${response.status}`)
  let exportBytes = 0
  let lines = 0
  for await (const chunk of response.body) {
    exportBytes += chunk.length
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++
  }
  const exportMs = performance.now() - exportStarted
  const exportPeak = exportSampler.stop()
  const copyExport = await psql(databaseUrl, [
    "-c",
    `COPY (SELECT id, created_at, action_id, action_name, agent_id, chat_id, channel, trigger_type, trigger_id, trigger_name,
       on_behalf_type, on_behalf_id, on_behalf_name, confirmed_by_user_id, confirmed_by_key_id, confirmed_by_name, confirmation_text,
       confirmation_asked, confirmed_at, hitl_version, hitl_mode, supervision, success, status_code, remote_called
     FROM action_executions WHERE tenant_id = '${tenantId}' AND created_at >= now() - interval '31 days'
     ORDER BY created_at, seq) TO STDOUT WITH (FORMAT csv, HEADER)`
  ])
  report(
    `export: ${rows.toLocaleString("en-US")} provenance rows as CSV (${(exportBytes / 1048576).toFixed(0)} MiB, ${
      lines.toLocaleString("en-US")
    } LF)`,
    `${(exportMs / 1000).toFixed(1)} s, ${rate(rows, exportMs)}`
  )
  report(
    "export: service peak RSS",
    `${exportPeak.toFixed(0)} MiB (+${(exportPeak - beforeExport).toFixed(0)} MiB over before export, +${
      (exportPeak - idleRss).toFixed(0)
    } MiB over idle)`
  )
  report(
    `baseline: COPY (same rows) TO STDOUT CSV via psql (${(copyExport.bytes / 1048576).toFixed(0)} MiB)`,
    `${(copyExport.ms / 1000).toFixed(1)} s, ${rate(rows, copyExport.ms)}`
  )
  report("export ÷ COPY (time)", `${(exportMs / copyExport.ms).toFixed(1)}×`)
} finally {
  await service.stop()
  await query(serverUrl, `DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`).catch((error) =>
    console.error(error)
  )
}
