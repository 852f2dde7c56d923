/**
 * Redis going away must not take the API down: while the service's Redis is
 * unreachable, requests are answered at once — rate limits allow, with the
 * whole quota in their headers (and a warning in the log), `/health` says
 * degraded —, a Redis that does not answer holds a request up for a second
 * at most, and once Redis is back, counting resumes. The service runs against
 * a Redis server of this test's own (stopped and started again), so the
 * shared one never goes down; skipped where `redis-server` is not installed.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { createClient } from "redis"
import { eventually } from "./Eventually.ts"
import { freePort } from "./ServiceProcess.ts"
import { bearer, createKey, http, layer as testServer, serverSuite } from "./TestServer.ts"

const installed = spawnSync("redis-server", ["--version"]).status === 0

/** A Redis server of this test's own on `port`, answering PING once it is up. */
const startRedis = (port: number) =>
  Effect.promise(() =>
    new Promise<ChildProcess>((resolve, reject) => {
      const child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: ["ignore", "pipe", "inherit"] }
      )
      let output = ""
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("Ready to accept connections")) resolve(child)
      })
      child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)))
    })
  )

const stopRedis = (child: ChildProcess) =>
  Effect.promise(() =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })
  )

/** The private Redis: its port, and its process (replaced when it is started again). */
interface PrivateRedisShape {
  readonly port: number
  readonly url: string
  child: ChildProcess
}

class PrivateRedis extends Context.Service<PrivateRedis, PrivateRedisShape>()("test/PrivateRedis") {}

/** The private Redis (stopped when the suite ends), and the service under test using it. */
const suite = Layer.unwrap(Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  const redis = yield* Effect.acquireRelease(
    Effect.map(startRedis(port), (child): PrivateRedisShape => ({ port, url: `redis://127.0.0.1:${port}`, child })),
    (redis) => stopRedis(redis.child)
  )
  return Layer.merge(
    Layer.succeed(PrivateRedis, redis),
    testServer({ REDIS_URL: redis.url, REDIS_PREFIX: "outage-test:" })
  )
}))

/**
 * GET `path`, given up after 15 s: a request waiting for a stopped Redis would never answer, one waiting for
 * the paused one would answer counted (remaining 3, not 5); the margin is for a machine busy with other suites.
 */
const get = (path: string, headers: Record<string, string> = {}) =>
  http(path, { headers, signal: AbortSignal.timeout(15_000) })

/** GET /v1/agents with `key`: its status and the quota left. */
const agents = (key: string) =>
  Effect.map(get("/v1/agents", bearer(key)), (response) => ({
    status: response.status,
    remaining: response.headers.get("x-ratelimit-remaining")
  }))

const health = get("/health")

describe.skipIf(!installed)("Redis outage (needs redis-server)", () => {
  layer(suite, serverSuite)("when Redis goes away", (it) => {
    it.effect(
      "requests are still answered at once (limits allow, with the whole quota), /health is degraded, and counting resumes when Redis is back",
      () =>
        Effect.gen(function*() {
          const redis = yield* PrivateRedis
          const { key } = yield* createKey(["agents"], { rate_limit_rpm: 5 })
          const counted = yield* agents(key)
          assert.deepStrictEqual(counted, { status: 200, remaining: "4" })

          // A Redis that does not answer (paused for 5 s): after a second the request is allowed, not left waiting.
          yield* Effect.promise(async () => {
            const client = createClient({ url: redis.url })
            await client.connect()
            await client.sendCommand(["CLIENT", "PAUSE", "5000", "ALL"])
            await client.close()
          })
          assert.deepStrictEqual(yield* agents(key), { status: 200, remaining: "5" })

          yield* stopRedis(redis.child)
          // Every request is answered while Redis is away, concurrent ones too: allowed, uncounted.
          const during = yield* Effect.all(Array.from({ length: 8 }, () => agents(key)), { concurrency: "unbounded" })
          for (const answer of during) assert.deepStrictEqual(answer, { status: 200, remaining: "5" })
          const degraded = yield* eventually(health, ({ status }) => status === 503)
          assert.strictEqual(degraded.body.checks.kv, "degraded")

          redis.child = yield* startRedis(redis.port)
          // The client reconnects by itself; the new Redis is empty, so the key's window starts over.
          yield* eventually(agents(key), ({ remaining }) => remaining === "4")
          assert.deepStrictEqual(yield* agents(key), { status: 200, remaining: "3" })
          yield* eventually(health, ({ status }) => status === 200)
        }),
      60_000
    )
  })
})
