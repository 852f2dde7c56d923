/**
 * Scale-out (issue #13): the README's deployment — two `ROLE=api` processes
 * and two `ROLE=jobs` processes of the built service (`pnpm start`'s bundle)
 * on one PostgreSQL database and one Redis — behaves as one service:
 *
 * - a key's rate limit is exact across the API processes;
 * - a revoked key is refused by every API process as soon as DELETE answers;
 * - each webhook delivery and each ingestion job is worked by one worker;
 * - the cleanups run once per tick for the whole cluster;
 * - room frames reach WebSocket clients connected to either API process.
 *
 * Only on the real PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL):
 * the embedded database belongs to one process, and without Redis each
 * process keeps its own rate-limit windows.
 */
import * as Sdk from "@agent-platform/sdk"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Redacted } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as SqlClient from "effect/sql/SqlClient"
import WebSocket from "ws"
import { eventually } from "./Eventually.ts"
import { jsonAnswer, localServer } from "./LocalHttp.ts"
import { deleteKeysOnClose } from "./RedisKeys.ts"
import { anaAndBoInARoom, roomSpace, setRoomsFlag } from "./RoomsFixtures.ts"
import { logEntries, type RunningService, start } from "./ServiceProcess.ts"
import { adminEmail, adminPassword, createKey, postgresCopy, TestServer } from "./TestServer.ts"

const postgresUrl = process.env.TEST_DATABASE_URL ?? ""
const redisUrl = process.env.TEST_REDIS_URL ?? ""
const realBackends = postgresUrl !== "" && redisUrl !== ""

/** The processes of the deployment, and a pool of the test's own to read what they wrote. */
class Cluster extends Context.Service<Cluster, {
  readonly api: readonly [RunningService, RunningService]
  readonly jobs: readonly [RunningService, RunningService]
}>()("test/ScaleOut/Cluster") {}

/**
 * A fresh copy of the migrated database, a private Redis prefix, one
 * SESSION_SECRET, and the four processes on them (the first API process
 * bootstraps the tenant; the others start together).
 */
const cluster = Layer.unwrap(Effect.gen(function*() {
  const databaseUrl = yield* postgresCopy(postgresUrl)
  const redisPrefix = `ap-test:${crypto.randomUUID()}:`
  yield* deleteKeysOnClose(redisUrl, redisPrefix)
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: redisPrefix,
    SESSION_SECRET: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"),
    BOOTSTRAP_ADMIN_EMAIL: adminEmail,
    BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
    ACTIONS_ALLOW_PRIVATE_NETWORKS: "true",
    CRON_INTERVAL_MS: "300"
  }
  const first = yield* start({ ...env, ROLE: "api" })
  const [second, jobsA, jobsB] = yield* Effect.all([
    start({ ...env, ROLE: "api" }),
    // Info: the jobs processes log the once-per-cluster steps they run.
    start({ ...env, ROLE: "jobs", LOG_LEVEL: "Info" }),
    start({ ...env, ROLE: "jobs", LOG_LEVEL: "Info" })
  ], { concurrency: "unbounded" })
  return Layer.merge(
    Layer.succeed(Cluster, { api: [first, second], jobs: [jobsA, jobsB] }),
    PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 2 })
  )
}))

/** The fixtures' `TestServer`, pointed at one API process. */
const serverAt = (process: RunningService) => {
  const client = (options: Omit<Sdk.ClientOptions, "baseUrl"> = {}) =>
    Sdk.make({ baseUrl: process.url, ...options }).pipe(Effect.provide(FetchHttpClient.layer))
  return TestServer.of({
    baseUrl: process.url,
    client,
    admin: Effect.gen(function*() {
      const connected = yield* client()
      yield* connected.api.auth.login({ payload: { email: adminEmail, password: adminPassword } }).pipe(Effect.orDie)
      return connected
    })
  })
}

/** Runs `effect` with the fixtures talking to API process `index`. */
const through = (index: 0 | 1) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Cluster, (c) => Effect.provideService(effect, TestServer, serverAt(c.api[index])))

/** The status of `GET /v1/agents` with `key` on `process`. */
const agentsStatus = (process: RunningService, key: string) =>
  Effect.promise(() =>
    fetch(`${process.url}/v1/agents`, { headers: { authorization: `Bearer ${key}` } }).then(async (response) => {
      await response.arrayBuffer()
      return response.status
    })
  )

/** The once-per-cluster runs a jobs process logged: the tick of each run of `step`. */
const ticksRun = (process: RunningService, step: string) =>
  logEntries(process.stdout()).flatMap(({ annotations }) =>
    annotations.cron_step === step && typeof annotations.tick === "string" ? [annotations.tick] : []
  )

/** A WebSocket to a room chat with a session; the frames it received; closed with the test. */
const roomSocket = (url: string, sessionToken: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly socket: WebSocket; readonly frames: Array<any> }, Error>((resume) => {
      const socket = new WebSocket(url, { headers: { cookie: `Service-Token=${sessionToken}` } })
      const frames: Array<any> = []
      socket.on("message", (data) => frames.push(JSON.parse(data.toString())))
      socket.on("error", (error) => resume(Effect.fail(error)))
      socket.on("open", () => resume(Effect.succeed({ socket, frames })))
    }),
    ({ socket }) => Effect.sync(() => socket.terminate())
  )

/**
 * A new subscription to a new receiver, and `events` executions of an action
 * (each queues one delivery), through both API processes: once all are
 * delivered, the POSTs the receiver got and the subscription's delivery log.
 */
const deliverWebhooks = (events: number) =>
  Effect.gen(function*() {
    const receiver = yield* localServer(() => ({ status: 200 }))
    const target = yield* localServer(() => jsonAnswer(200, { ok: true }))
    const admin = yield* through(0)(Effect.flatMap(TestServer, (server) => server.admin))
    const subscription = yield* admin.api.webhooks.create({
      payload: { name: "scale-out", url: receiver.url, event_filter: "*" }
    })
    const action = yield* admin.api.actionsAdmin.create({
      payload: { name: "notify", description: "", http_method: "GET", url: target.url, parameters: [], is_active: true }
    })
    const { key } = yield* through(0)(createKey(["actions"]))
    yield* Effect.forEach(Array.from({ length: events }, (_, i) => i), (i) =>
      through((i % 2) as 0 | 1)(
        Effect.flatMap(
          Effect.flatMap(TestServer, (server) => server.client({ apiKey: key })),
          (client) => client.api.actions.execute({ params: { id: action.id }, payload: {} })
        )
      ), { concurrency: 8, discard: true })
    // Every delivery recorded as delivered: none can be attempted again.
    const log = yield* eventually(
      admin.api.webhooks.log({ params: { id: subscription.id }, query: { limit: 100 } }),
      (page) => page.deliveries.length === events && page.deliveries.every((d) => d.status === "delivered"),
      "60 seconds"
    )
    return { received: receiver.received, deliveries: log.deliveries }
  })

/**
 * `documents` documents ingested into a new space's agent through both API
 * processes: once all are ready, their files' rows (attempts, chunks).
 */
const ingestDocuments = (documents: number) =>
  Effect.gen(function*() {
    const { support } = yield* through(0)(Effect.andThen(setRoomsFlag(true), roomSpace()))
    const { key } = yield* through(0)(createKey(["knowledge:write", "knowledge:read"]))
    const accepted = yield* Effect.forEach(
      Array.from({ length: documents }, (_, i) => i),
      (i) =>
        through((i % 2) as 0 | 1)(
          Effect.flatMap(
            Effect.flatMap(TestServer, (server) => server.client({ apiKey: key })),
            (client) =>
              client.api.knowledge.ingest({
                payload: {
                  agent_id: support.id,
                  filename: `doc-${i}.md`,
                  content: `# Document ${i}\n\n${"Refunds are paid within fourteen days. ".repeat(60)}`
                }
              })
          )
        ),
      { concurrency: 6 }
    )
    const client = yield* through(1)(Effect.flatMap(TestServer, (server) => server.client({ apiKey: key })))
    const ids = new Set(accepted.map((a) => a.file_id))
    yield* eventually(
      client.api.knowledge.list({ query: { agent_id: support.id } }),
      ({ files }) => files.filter((f) => ids.has(f.id) && f.status === "ready").length === documents,
      "90 seconds"
    )
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ attempts: number; chunks: string; ordinals: string; chunk_count: number }>`
      SELECT f.attempts, f.chunk_count,
             (SELECT count(*) FROM knowledge_chunks c WHERE c.file_id = f.id)::text AS chunks,
             (SELECT count(DISTINCT ordinal) FROM knowledge_chunks c WHERE c.file_id = f.id)::text AS ordinals
      FROM knowledge_files f WHERE f.agent_id = ${support.id}`
  })

/**
 * Runs `effect` with jobs process `index` alone at work: the other is stopped
 * (SIGSTOP) for its duration, before any of its work is queued, and resumed
 * (SIGCONT) after, whatever happens.
 */
const withJobsProcessAlone = (index: 0 | 1) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Cluster, ({ jobs }) =>
    Effect.acquireUseRelease(
      Effect.sync(() => process.kill(jobs[1 - index].pid, "SIGSTOP")),
      () => effect,
      () => Effect.sync(() => process.kill(jobs[1 - index].pid, "SIGCONT"))
    ))

const hasMessage = (frames: Array<any>, content: string) =>
  frames.some((frame) => Array.isArray(frame.messages) && frame.messages.some((m: any) => m.content === content))

describe.skipIf(!realBackends)(
  "scale-out: two ROLE=api and two ROLE=jobs processes on one PostgreSQL and Redis (needs TEST_DATABASE_URL and TEST_REDIS_URL; skipped without them)",
  () => {
    layer(cluster, { excludeTestServices: true, timeout: "240 seconds" })("the deployment", (it) => {
      it.effect("a key's rate limit is exact across both API processes: rpm 100 gives exactly 100 successes", () =>
        Effect.gen(function*() {
          const { api } = yield* Cluster
          const { key } = yield* through(0)(createKey(["agents:read"], { rate_limit_rpm: 100 }))
          // 150 requests, alternating between the processes, ten at a time: far less than the minute of the window.
          const statuses = yield* Effect.forEach(
            Array.from({ length: 150 }, (_, i) => i),
            (i) => Effect.map(agentsStatus(api[i % 2], key), (status) => ({ process: i % 2, status })),
            { concurrency: 10 }
          )
          const served = statuses.filter((s) => s.status === 200)
          assert.strictEqual(served.length, 100)
          assert.strictEqual(statuses.filter((s) => s.status === 429).length, 50)
          // Both processes served part of the quota: the count is shared, not per process.
          assert.isAbove(served.filter((s) => s.process === 0).length, 0)
          assert.isAbove(served.filter((s) => s.process === 1).length, 0)
        }))

      it.effect("a revoked key is refused by every API process as soon as DELETE answers", () =>
        Effect.gen(function*() {
          const { api } = yield* Cluster
          for (let trial = 0; trial < 6; trial++) {
            const revoker = (trial % 2) as 0 | 1
            const { id, key } = yield* through(0)(createKey(["agents:read"]))
            // Both processes have verified (and cached) the key.
            assert.strictEqual(yield* agentsStatus(api[0], key), 200)
            assert.strictEqual(yield* agentsStatus(api[1], key), 200)
            const admin = yield* through(revoker)(Effect.flatMap(TestServer, (server) => server.admin))
            yield* admin.api.keys.revoke({ params: { id } })
            assert.strictEqual(yield* agentsStatus(api[1 - revoker], key), 401, `trial ${trial}, the other process`)
            assert.strictEqual(yield* agentsStatus(api[revoker], key), 401, `trial ${trial}, the revoking process`)
          }
        }))

      it.effect("each webhook delivery is sent once, with two jobs processes claiming from the queue", () =>
        Effect.gen(function*() {
          const events = 40
          const { deliveries, received } = yield* deliverWebhooks(events)
          assert.isTrue(deliveries.every((d) => d.attempts === 1), "one attempt each")
          const ids = received.map((request) => String(request.headers["webhook-id"]))
          assert.strictEqual(ids.length, events, "POSTs received")
          assert.strictEqual(new Set(ids).size, events, "distinct deliveries")
          assert.deepStrictEqual(
            new Set(ids),
            new Set(deliveries.map((d) => d.id)),
            "the deliveries received are the deliveries queued"
          )
        }))

      it.effect("each ingestion job is processed once, with two jobs processes claiming from the queue", () =>
        Effect.gen(function*() {
          const documents = 24
          const rows = yield* ingestDocuments(documents)
          // One claim per file (a second worker taking it would have counted a second attempt), one set of chunks.
          assert.strictEqual(rows.length, documents)
          for (const row of rows) {
            assert.strictEqual(row.attempts, 1)
            assert.isAbove(row.chunk_count, 0)
            assert.strictEqual(Number(row.chunks), row.chunk_count)
            assert.strictEqual(Number(row.ordinals), row.chunk_count)
          }
        }))

      it.effect("both jobs processes work the queues: each, while the other is stopped, delivers and ingests alone", () =>
        Effect.gen(function*() {
          for (const alone of [0, 1] as const) {
            const { deliveries, received } = yield* withJobsProcessAlone(alone)(deliverWebhooks(6))
            assert.strictEqual(received.length, 6, `jobs process ${alone} alone: POSTs received`)
            assert.isTrue(deliveries.every((d) => d.attempts === 1))
            const rows = yield* withJobsProcessAlone(alone)(ingestDocuments(3))
            assert.deepStrictEqual(rows.map((row) => row.attempts), [1, 1, 1], `jobs process ${alone} alone: ingested`)
          }
        }))

      it.effect("the session cleanup runs once per tick for the whole cluster, not once per jobs process", () =>
        Effect.gen(function*() {
          const { jobs } = yield* Cluster
          const step = "delete sessions ended over a day ago"
          const sql = yield* SqlClient.SqlClient
          // A session that ended two days ago: the cleanup deletes it, whichever process runs it.
          const [user] = yield* sql<{ id: string; tenant_id: string }>`SELECT id, tenant_id FROM users LIMIT 1`
          const [ended] = yield* sql<{ id: string }>`
            INSERT INTO sessions (tenant_id, user_id, expires_at)
            VALUES (${user.tenant_id}, ${user.id}, now() - interval '2 days')
            RETURNING id`
          yield* eventually(sql`SELECT 1 FROM sessions WHERE id = ${ended.id}`, (found) => found.length === 0)
          // Twenty ticks of 300 ms, each cleaned up by one process.
          const runs = yield* eventually(
            Effect.sync(() => jobs.map((process) => ticksRun(process, step))),
            (perProcess) => perProcess.flat().length >= 20,
            "30 seconds"
          )
          const all = runs.flat()
          assert.strictEqual(new Set(all).size, all.length, `a tick ran twice: ${JSON.stringify(runs)}`)
        }))

      it.effect("room frames reach WebSocket clients connected to either API process", () =>
        Effect.gen(function*() {
          const { api } = yield* Cluster
          const { ana, bo, room } = yield* through(0)(anaAndBoInARoom)
          const path = `/api/chats/${room.chat_id}/ws`
          const onFirst = yield* roomSocket(
            `${api[0].url.replace(/^http/, "ws")}${path}`,
            (yield* ana.client.sessionToken)!
          )
          const onSecond = yield* roomSocket(
            `${api[1].url.replace(/^http/, "ws")}${path}`,
            (yield* bo.client.sessionToken)!
          )
          // The first frame (the poll envelope) on both, then appends through each process in turn.
          yield* eventually(Effect.sync(() => onFirst.frames.length > 0 && onSecond.frames.length > 0), (ok) => ok)
          for (const [index, content] of [[0, "through the first"], [1, "through the second"]] as const) {
            // Bo appends with his session through process `index`.
            const boThere = yield* through(index)(
              Effect.flatMap(TestServer, (server) =>
                Effect.flatMap(bo.client.sessionToken, (sessionToken) => server.client({ sessionToken })))
            )
            yield* boThere.api.roomChats.append({ params: { id: room.chat_id }, payload: { content } })
            yield* eventually(
              Effect.sync(() =>
                hasMessage(onFirst.frames, content) && hasMessage(onSecond.frames, content)
              ),
              (ok) => ok
            )
          }
          // A long poll waiting on one process answers when a message is appended through the other.
          const anaOnSecond = yield* through(1)(
            Effect.flatMap(
              TestServer,
              (server) => Effect.flatMap(ana.client.sessionToken, (sessionToken) => server.client({ sessionToken }))
            )
          )
          const waiting = yield* anaOnSecond.api.roomChats.poll({
            params: { id: room.chat_id },
            query: { after: 2, wait: 30 }
          })
            .pipe(Effect.forkChild)
          yield* bo.client.api.roomChats.append({
            params: { id: room.chat_id },
            payload: { content: "to the long poll" }
          })
          const polled = yield* Fiber.join(waiting)
          assert.deepStrictEqual(polled.messages.map((m) => m.content), ["to the long poll"])
        }))
    })
  }
)
