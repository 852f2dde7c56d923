/**
 * Revocation across replicas (issue #8, item 13): two API servers in this
 * process on one database (the embedded run: one PGlite instance, a pool per
 * server; the PostgreSQL run: one database, a pool per server). A key revoked
 * on one is refused by the other from the moment DELETE answers, also when
 * the other's notification listener is down. The agent lists every replica
 * caches (issue #13) follow a change made on another replica the same way, and
 * a change made in SQL by hand as soon as it commits.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { readFileSync } from "node:fs"
import { inject } from "vitest"
import { DatabaseMode, layerPostgres } from "../src/Platform/Database.ts"
import * as EmbeddedPostgres from "../src/Platform/EmbeddedPostgres.ts"
import type { DatabaseLayer } from "../src/Server.ts"
import { eventually } from "./Eventually.ts"
import { adminEmail, adminPassword, layer as testServer, postgresCopy, TestServer } from "./TestServer.ts"

const postgresUrl = process.env.TEST_DATABASE_URL ?? ""

/** One database, and a layer giving each replica its own pool to it. */
const sharedDatabase = Effect.gen(function*() {
  if (postgresUrl === "") {
    const template = new Blob([readFileSync(inject("embeddedTemplate"))])
    const db = yield* EmbeddedPostgres.open({ dataDir: undefined, loadDataDir: template })
    const pool: DatabaseLayer = Layer.merge(
      PgClient.layerFrom(PgClient.make(EmbeddedPostgres.clientConfig(db))),
      Layer.succeed(DatabaseMode, { kind: "embedded" })
    )
    return pool
  }
  const pool: DatabaseLayer = layerPostgres(Redacted.make(yield* postgresCopy(postgresUrl)))
  return pool
})

/** Two replicas: each built on its own (nothing shared but the database and the session secret). */
const twoReplicas = Effect.gen(function*() {
  const database = yield* sharedDatabase
  const env = { SESSION_SECRET: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex") }
  const start = Effect.map(Layer.build(testServer(env, { database })), (context) => ({
    server: Context.get(context, TestServer),
    sql: Context.get(context, SqlClient.SqlClient)
  }))
  const a = yield* start
  const b = yield* start
  return { a, b }
})

const status = (baseUrl: string, key: string) =>
  Effect.promise(() =>
    fetch(`${baseUrl}/v1/agents`, { headers: { authorization: `Bearer ${key}` } }).then(async (response) => {
      await response.arrayBuffer()
      return response.status
    })
  )

const signedIn = (server: TestServer["Service"]) =>
  Effect.gen(function*() {
    const client = yield* server.client()
    yield* client.api.auth.login({ payload: { email: adminEmail, password: adminPassword } })
    return client
  }).pipe(Effect.orDie)

it.live("a key revoked on one replica is refused by the other as soon as DELETE answers", () =>
  Effect.gen(function*() {
    const { a, b } = yield* twoReplicas
    const adminA = yield* signedIn(a.server)
    for (let trial = 0; trial < 10; trial++) {
      const { id, key } = yield* adminA.api.keys.create({
        payload: { name: `trial ${trial}`, scopes: ["agents:read"] }
      })
      // Both replicas have verified (and cached) the key.
      assert.strictEqual(yield* status(b.server.baseUrl, key), 200)
      assert.strictEqual(yield* status(a.server.baseUrl, key), 200)
      assert.strictEqual(yield* status(b.server.baseUrl, key), 200)
      yield* adminA.api.keys.revoke({ params: { id } })
      assert.strictEqual(yield* status(b.server.baseUrl, key), 401, `trial ${trial}`)
      assert.strictEqual(yield* status(a.server.baseUrl, key), 401, `trial ${trial}`)
    }
  }).pipe(Effect.scoped), { timeout: 180_000 })

it.live(
  "a replica whose notification listener dropped stops trusting its cache: the revoked key is never accepted again",
  () =>
    Effect.gen(function*() {
      if (postgresUrl === "") return // One PGlite backend serves both replicas: its listener cannot drop.
      const { a, b } = yield* twoReplicas
      const adminA = yield* signedIn(a.server)
      const { id, key } = yield* adminA.api.keys.create({ payload: { name: "cached on b", scopes: ["agents:read"] } })
      assert.strictEqual(yield* status(b.server.baseUrl, key), 200)
      assert.strictEqual(yield* status(b.server.baseUrl, key), 200)
      // Every replica's LISTEN connection goes: the revocation's notification reaches nobody.
      const dropped = yield* a.sql<{ pid: number }>`
      SELECT pg_terminate_backend(pid) AS dropped, pid FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`
      assert.isAtLeast(dropped.length, 2)
      yield* adminA.api.keys.revoke({ params: { id } })
      const until = Date.now() + 4_000
      while (Date.now() < until) {
        assert.strictEqual(yield* status(b.server.baseUrl, key), 401)
        yield* Effect.sleep("50 millis")
      }
    }).pipe(Effect.scoped),
  { timeout: 180_000 }
)

/** The names in a key's agent list, read from one replica. */
const agentNames = (baseUrl: string, key: string) =>
  Effect.promise(() =>
    fetch(`${baseUrl}/v1/agents`, { headers: { authorization: `Bearer ${key}` } }).then(async (response) => {
      const body = (await response.json()) as { readonly agents: ReadonlyArray<{ readonly name: string }> }
      return body.agents.map((agent) => agent.name).sort()
    })
  )

it.live(
  "an agent changed on one replica is in the other's cached list as soon as the change answers",
  () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoReplicas
      const adminA = yield* signedIn(a.server)
      const space = yield* adminA.api.admin.createSpace({ payload: { code: "cached", name: "Cached" } })
      const { key } = yield* adminA.api.keys.create({ payload: { name: "lists", scopes: ["agents:read"] } })
      const before = yield* agentNames(b.server.baseUrl, key)
      for (let trial = 0; trial < 5; trial++) {
        // Both replicas have read (and cached) the list.
        assert.deepStrictEqual(yield* agentNames(b.server.baseUrl, key), before)
        assert.deepStrictEqual(yield* agentNames(a.server.baseUrl, key), before)
        const agent = yield* adminA.api.agentsAdmin.create({
          payload: { space_id: space.id, name: `Trial ${trial}`, summary: "Cached", is_primary: false }
        })
        assert.deepStrictEqual(yield* agentNames(b.server.baseUrl, key), [...before, `Trial ${trial}`].sort())
        yield* adminA.api.agentsAdmin.update({ params: { id: agent.id }, payload: { name: `Renamed ${trial}` } })
        assert.deepStrictEqual(yield* agentNames(b.server.baseUrl, key), [...before, `Renamed ${trial}`].sort())
        assert.deepStrictEqual(yield* agentNames(a.server.baseUrl, key), [...before, `Renamed ${trial}`].sort())
        yield* adminA.api.agentsAdmin.delete({ params: { id: agent.id } })
        assert.deepStrictEqual(yield* agentNames(b.server.baseUrl, key), before)
        assert.deepStrictEqual(yield* agentNames(a.server.baseUrl, key), before)
      }
      // A change made outside the service reaches every replica's list once it commits (a trigger publishes it).
      const [agent] = yield* a.sql<{ id: string }>`
      INSERT INTO agents (tenant_id, space_id, name, summary)
      SELECT tenant_id, id, 'By hand', 'Inserted in SQL' FROM spaces WHERE id = ${space.id} RETURNING id`
      const expected = [...before, "By hand"].sort()
      yield* eventually(agentNames(b.server.baseUrl, key), (names) => names.join() === expected.join())
      yield* eventually(agentNames(a.server.baseUrl, key), (names) => names.join() === expected.join())
      yield* a.sql`UPDATE spaces SET code = 'renamed-by-hand' WHERE id = ${space.id}`
      const codes = (baseUrl: string) =>
        Effect.promise(() =>
          fetch(`${baseUrl}/v1/agents`, { headers: { authorization: `Bearer ${key}` } }).then(async (response) => {
            const body = (await response.json()) as {
              readonly agents: ReadonlyArray<{ readonly id: string; readonly space_code: string }>
            }
            return body.agents.find((item) => item.id === agent.id)?.space_code
          })
        )
      yield* eventually(codes(b.server.baseUrl), (code) => code === "renamed-by-hand")
    }).pipe(Effect.scoped),
  { timeout: 180_000 }
)
