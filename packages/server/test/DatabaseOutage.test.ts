/**
 * PostgreSQL going away (a restart, a failover, a network cut) is the
 * operator's to fix, and the callers' to wait out: while the service cannot
 * reach its database, what needs the database answers 503 `ServiceUnavailable`
 * with `Retry-After` and a message saying so — not a 500 "report this" —,
 * `/health` says degraded, and once the database is back the service serves
 * again without a restart, its workers included. The service reaches PostgreSQL through a TCP relay
 * of this test's own, which the test cuts and restores, so the shared server
 * never goes down. Only on the real PostgreSQL (TEST_DATABASE_URL).
 */
import * as Sdk from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { connect, createServer, type Server, type Socket } from "node:net"
import { layerPostgres } from "../src/Platform/Database.ts"
import { spaceWithAgent } from "./Catalog.ts"
import { eventually } from "./Eventually.ts"
import {
  adminClient,
  bearer,
  createKey,
  http,
  keyClient,
  layer as testServer,
  postgresCopy,
  serverSuite,
  sessionCookie
} from "./TestServer.ts"

const postgresUrl = process.env.TEST_DATABASE_URL ?? ""

/** A TCP relay on 127.0.0.1 to PostgreSQL that can be cut (every connection dropped, new ones refused) and restored. */
interface RelayShape {
  readonly cut: Effect.Effect<void>
  readonly restore: Effect.Effect<void>
}
class Relay extends Context.Service<Relay, RelayShape>()("test/Relay") {}

const makeRelay = (target: URL) =>
  Effect.gen(function*() {
    const sockets = new Set<Socket>()
    let server: Server | undefined
    let port = 0
    const listen = Effect.promise(() =>
      new Promise<void>((resolve) => {
        const relay = createServer((client) => {
          const upstream = connect(Number(target.port || 5432), target.hostname)
          for (const socket of [client, upstream]) {
            sockets.add(socket)
            socket.on("close", () => sockets.delete(socket))
            socket.on("error", () => socket.destroy())
          }
          client.pipe(upstream).pipe(client)
          client.on("close", () => upstream.destroy())
          upstream.on("close", () => client.destroy())
        })
        relay.listen(port, "127.0.0.1", () => {
          port = (relay.address() as { port: number }).port
          server = relay
          resolve()
        })
      })
    )
    const cut = Effect.promise(() =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        if (server === undefined) return resolve()
        server.close(() => resolve())
        server = undefined
      })
    )
    yield* Effect.acquireRelease(listen, () => cut)
    const url = new URL(target)
    url.host = `127.0.0.1:${port}`
    return { url: url.toString(), relay: Relay.of({ cut, restore: listen }) }
  })

const suite = Layer.unwrap(Effect.gen(function*() {
  const database = new URL(yield* postgresCopy(postgresUrl))
  const { relay, url } = yield* makeRelay(database)
  return Layer.merge(
    Layer.succeed(Relay, relay),
    testServer({}, { redis: false, database: layerPostgres(Redacted.make(url)) })
  )
}))

/** GET `path` with `headers`, given up after 10 s (a request waiting for the database would not answer). */
const get = (path: string, headers: Record<string, string> = {}) =>
  http(path, { headers, signal: AbortSignal.timeout(10_000) })

describe.skipIf(postgresUrl === "")("PostgreSQL outage (needs TEST_DATABASE_URL)", () => {
  layer(suite, serverSuite)("when PostgreSQL goes away", (it) => {
    it.effect(
      "what needs the database answers 503 with Retry-After, /health is degraded, and the service serves again once it is back",
      () =>
        Effect.gen(function*() {
          const relay = yield* Relay
          const cookie = yield* Effect.flatMap(adminClient, sessionCookie)
          assert.strictEqual((yield* get("/api/admin/users", { cookie })).status, 200)
          // A key not used yet: verifying it needs the database.
          const { key } = yield* createKey(["agents"])

          yield* relay.cut
          for (const during of [yield* get("/api/admin/users", { cookie }), yield* get("/v1/agents", bearer(key))]) {
            assert.strictEqual(during.status, 503, JSON.stringify(during.body))
            assert.strictEqual(during.body._tag, "ServiceUnavailable")
            assert.match(during.body.error, /database is unavailable.*retry in 5 seconds/)
            assert.strictEqual(during.headers.get("retry-after"), "5")
          }
          const health = yield* eventually(get("/health"), ({ status }) => status === 503)
          assert.strictEqual(health.body.checks.database, "degraded")

          yield* relay.restore
          yield* eventually(get("/api/admin/users", { cookie }), ({ status }) => status === 200)
          yield* eventually(get("/health"), ({ status }) => status === 200)
          // The workers lived through it: a document uploaded now is processed.
          const { agent } = yield* spaceWithAgent({ name: "After", summary: "Asked after the outage" })
          const { key: files } = yield* createKey(["files"])
          const client = yield* keyClient(files)
          const accepted = yield* client.api.knowledge.ingest({
            payload: { agent_id: agent.id, filename: "after.md", content: "The database came back." }
          })
          const ready = yield* Sdk.waitUntilReady(client, { agentId: agent.id, fileId: accepted.file_id }, {
            timeout: "30 seconds"
          })
          assert.strictEqual(ready.status, "ready")
        }),
      90_000
    )
  })
})
