/**
 * `GET /v1/agents` as a user would write it by hand on node:http, the
 * baseline `bench:auth` compares the platform with: the same checks — Bearer
 * key, its SHA-256 looked up once and cached for 30 s, the scope, the
 * per-minute rate limits of the key and of the endpoint class (one Redis
 * script, or in memory), the agents query with a prepared statement — the
 * same JSON and rate-limit headers, and one JSON log line per request.
 *
 * PostgreSQL: DATABASE_URL (the platform's own tables) and REDIS_URL.
 * Embedded: no DATABASE_URL; PGlite in memory, seeded from SEED_FILE (the
 * keys' hashes and the agents the platform has). Listens on PORT.
 */
import { PGlite } from "@electric-sql/pglite"
import { createHash, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"
import { createClient } from "redis"

interface KeyRow {
  readonly id: string
  readonly tenant_id: string
  readonly scopes: ReadonlyArray<string>
  readonly rate_limit_rpm: number
}

interface AgentRow {
  readonly id: string
  readonly name: string
  readonly summary: string
  readonly is_primary: boolean
  readonly space_id: string
  readonly code: string
}

const keySql = "SELECT id, tenant_id, scopes, rate_limit_rpm FROM api_keys WHERE key_hash = $1 AND is_active"
const agentsSql = `SELECT a.id, a.name, a.summary, a.is_primary, a.space_id, s.code
  FROM agents a JOIN spaces s ON s.id = a.space_id
  WHERE a.tenant_id = $1 ORDER BY s.code, a.is_primary DESC, a.name, a.id`

type Query = <R>(name: string, text: string, values: ReadonlyArray<unknown>) => Promise<ReadonlyArray<R>>

const openDatabase = async (): Promise<Query> => {
  const url = process.env.DATABASE_URL
  if (url !== undefined && url !== "") {
    const pool = new pg.Pool({ connectionString: url, max: 10 })
    return async (name, text, values) => (await pool.query({ name, text, values: [...values] })).rows
  }
  const seed = JSON.parse(readFileSync(process.env.SEED_FILE!, "utf8")) as {
    readonly keys: ReadonlyArray<KeyRow & { readonly hash: string }>
    readonly agents: ReadonlyArray<
      { id: string; name: string; summary: string; is_primary: boolean; group_id: string; space_code: string }
    >
    readonly tenantId: string
  }
  const db = await PGlite.create()
  await db.exec(`
    CREATE TABLE api_keys (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, key_hash text NOT NULL UNIQUE, scopes text[] NOT NULL,
      rate_limit_rpm integer NOT NULL, is_active boolean NOT NULL DEFAULT true);
    CREATE TABLE spaces (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, code text NOT NULL);
    CREATE TABLE agents (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, space_id uuid NOT NULL REFERENCES spaces (id), name text NOT NULL,
      summary text NOT NULL, is_primary boolean NOT NULL);
    CREATE INDEX agents_tenant_idx ON agents (tenant_id);`)
  for (const key of seed.keys) {
    await db.query(
      "INSERT INTO api_keys (id, tenant_id, key_hash, scopes, rate_limit_rpm) VALUES ($1, $2, $3, $4, $5)",
      [
        key.id,
        key.tenant_id,
        key.hash,
        key.scopes,
        key.rate_limit_rpm
      ]
    )
  }
  for (const agent of seed.agents) {
    await db.query("INSERT INTO spaces (id, tenant_id, code) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
      agent.group_id,
      seed.tenantId,
      agent.space_code
    ])
    await db.query(
      "INSERT INTO agents (id, tenant_id, space_id, name, summary, is_primary) VALUES ($1, $2, $3, $4, $5, $6)",
      [
        agent.id,
        seed.tenantId,
        agent.group_id,
        agent.name,
        agent.summary,
        agent.is_primary
      ]
    )
  }
  return async (_name, text, values) => (await db.query(text, [...values])).rows as never
}

/** Both windows (key and class) checked and counted together: [allowed, limit, remaining, ttl ms]. */
type Limiter = (keyId: string, keyRpm: number) => Promise<readonly [boolean, number, number, number]>

const classLimit = 300
const windowMs = 60_000

const openLimiter = async (): Promise<Limiter> => {
  const url = process.env.REDIS_URL
  if (url !== undefined && url !== "") {
    const redis = createClient({ url })
    await redis.connect()
    const sha = await redis.scriptLoad(`
local function read(key)
  local ttl = redis.call("PTTL", key)
  if ttl < 0 then return 0, tonumber(ARGV[3]) end
  return tonumber(redis.call("GET", key)), ttl
end
local c1, t1 = read(KEYS[1])
local c2, t2 = read(KEYS[2])
if c1 >= tonumber(ARGV[1]) then return { 0, 1, c1, t1 } end
if c2 >= tonumber(ARGV[2]) then return { 0, 2, c2, t2 } end
local function count(key, c) if c == 0 then redis.call("SET", key, 1, "PX", ARGV[3]) return 1 end return redis.call("INCR", key) end
c1 = count(KEYS[1], c1)
c2 = count(KEYS[2], c2)
if ARGV[2] - c2 < ARGV[1] - c1 then return { 1, 2, c2, t2 } end
return { 1, 1, c1, t1 }`)
    const prefix = `handwritten-${process.pid}:`
    return async (keyId, keyRpm) => {
      const [allowed, which, count, ttl] = (await redis.evalSha(sha, {
        keys: [`${prefix}{${keyId}}:data`, `${prefix}{${keyId}}`],
        arguments: [String(classLimit), String(keyRpm), String(windowMs)]
      })) as [number, number, number, number]
      const limit = which === 1 ? classLimit : keyRpm
      return [allowed === 1, limit, limit - count, ttl]
    }
  }
  const windows = new Map<string, { count: number; closesAt: number }>()
  const read = (key: string, now: number) => {
    const window = windows.get(key)
    if (window !== undefined && window.closesAt > now) return window
    const fresh = { count: 0, closesAt: now + windowMs }
    windows.set(key, fresh)
    return fresh
  }
  return async (keyId, keyRpm) => {
    const now = Date.now()
    const byClass = read(`${keyId}:data`, now)
    const byKey = read(keyId, now)
    if (byClass.count >= classLimit) return [false, classLimit, 0, byClass.closesAt - now]
    if (byKey.count >= keyRpm) return [false, keyRpm, 0, byKey.closesAt - now]
    byClass.count++
    byKey.count++
    return keyRpm - byKey.count < classLimit - byClass.count
      ? [true, keyRpm, keyRpm - byKey.count, byKey.closesAt - now]
      : [true, classLimit, classLimit - byClass.count, byClass.closesAt - now]
  }
}

const query = await openDatabase()
const limit = await openLimiter()
const keyCache = new Map<string, { readonly row: KeyRow | undefined; readonly until: number }>()
const keyPattern = /^sk_live_[0-9a-f]{64}$/

const fail = (res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify({ error }))
  return status
}

createServer((req, res) => {
  const started = performance.now()
  const requestId = randomUUID()
  res.setHeader("x-request-id", requestId)
  const handle = async (): Promise<number> => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/v1/agents") return fail(res, 404, "No route")
    const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")
    const token = match?.[1].trim() ?? ""
    if (!keyPattern.test(token)) return fail(res, 401, "Invalid or revoked API key.")
    const hash = createHash("sha256").update(token).digest("hex")
    let cached = keyCache.get(hash)
    if (cached === undefined || cached.until < Date.now()) {
      const [row] = await query<KeyRow>("key", keySql, [hash])
      cached = { row, until: Date.now() + 30_000 }
      keyCache.set(hash, cached)
    }
    const key = cached.row
    if (key === undefined) return fail(res, 401, "Invalid or revoked API key.")
    if (!key.scopes.includes("agents") && !key.scopes.includes("agents:read")) {
      return fail(res, 403, "This endpoint needs the scope `agents`.")
    }
    const [allowed, max, remaining, ttl] = await limit(key.id, key.rate_limit_rpm)
    const reset = String(Math.max(1, Math.ceil(ttl / 1000)))
    const headers = {
      "x-ratelimit-limit": String(max),
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": reset
    }
    if (!allowed) {
      return fail(res, 429, `Rate limit of ${max} requests per minute exceeded.`, { ...headers, "retry-after": reset })
    }
    const rows = await query<AgentRow>("agents", agentsSql, [key.tenant_id])
    const body = JSON.stringify({
      agents: rows.map((r) => ({
        id: r.id,
        name: r.name,
        summary: r.summary,
        is_primary: r.is_primary,
        group_id: r.space_id,
        space_code: r.code
      }))
    })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
      .end(body)
    return 200
  }
  handle().then(
    (status) =>
      process.stdout.write(
        `${
          JSON.stringify({
            message: "request",
            level: "INFO",
            timestamp: new Date().toISOString(),
            request_id: requestId,
            method: req.method,
            path: req.url,
            status,
            duration_ms: Math.round((performance.now() - started) * 10) / 10
          })
        }\n`
      ),
    (error) => fail(res, 500, String(error))
  )
}).listen(Number(process.env.PORT), "127.0.0.1")
