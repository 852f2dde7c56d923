/**
 * `agent-platform security reset-allowlist` (issue #8, item 11): the
 * operator's recovery of a tenant whose allowlist shuts everyone out, run as
 * a child process against the database itself — the embedded one in
 * DATA_DIR, or the real PostgreSQL of TEST_DATABASE_URL.
 */
import { assert, it } from "@effect/vitest"
import { Effect, type Layer, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { layerEmbedded, layerPostgres, migrate } from "../../server/src/Platform/Database.ts"
import { postgresCopy } from "../../server/test/TestServer.ts"
import { run, temporaryDirectory } from "./CliProcess.ts"

const postgresUrl = process.env.TEST_DATABASE_URL ?? ""

/** A database for the CLI: its environment, and a way to query it from the test in between runs. */
const database = Effect.gen(function*() {
  if (postgresUrl === "") {
    const dir = yield* temporaryDirectory
    // The embedded database admits one process: the test opens it only while the CLI does not run.
    const query = <A, E>(use: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      use.pipe(Effect.provide(layerEmbedded({ dataDir: dir }) as Layer.Layer<SqlClient.SqlClient>), Effect.scoped)
    return { env: { DATA_DIR: dir }, query }
  }
  const url = yield* postgresCopy(postgresUrl)
  const query = <A, E>(use: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    use.pipe(Effect.provide(layerPostgres(Redacted.make(url)) as Layer.Layer<SqlClient.SqlClient>), Effect.scoped)
  return { env: { DATABASE_URL: url }, query }
})

it.live(
  "reset-allowlist deletes every rule of the tenant named, by name or id, and records it in its audit log",
  () =>
    Effect.gen(function*() {
      const db = yield* database
      const tenantId = yield* db.query(Effect.gen(function*() {
        yield* migrate
        const sql = yield* SqlClient.SqlClient
        const [tenant] = yield* sql<{ id: string }>`INSERT INTO tenants (name) VALUES ('Acme Locked') RETURNING id`
        const [other] = yield* sql<{ id: string }>`INSERT INTO tenants (name) VALUES ('Bystander') RETURNING id`
        yield* sql`INSERT INTO ip_allowlist (tenant_id, cidr) VALUES (${tenant.id}, '203.0.113.0/24'), (${tenant.id}, '2001:db8::/32'), (${other.id}, '198.51.100.0/24')`
        return tenant.id
      }))

      const reset = yield* run(["security", "reset-allowlist", "--tenant", "acme locked"], db.env)
      assert.strictEqual(reset.code, 0, reset.stderr)
      assert.match(reset.stdout, /Removed 2 allowlist rule\(s\) of tenant Acme Locked/)
      assert.include(reset.stdout, "203.0.113.0/24")

      const again = yield* run(["security", "reset-allowlist", "--tenant", tenantId, "--json"], db.env)
      assert.strictEqual(again.code, 0, again.stderr)
      assert.deepStrictEqual(JSON.parse(again.stdout), { tenant: { id: tenantId, name: "Acme Locked" }, removed: [] })

      const unknown = yield* run(["security", "reset-allowlist", "--tenant", "no such tenant"], db.env)
      assert.strictEqual(unknown.code, 1)
      assert.match(unknown.stderr, /error: No tenant named no such tenant/)

      const after = yield* db.query(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rules = yield* sql<{ tenant: string; cidr: string }>`
        SELECT t.name AS tenant, r.cidr FROM ip_allowlist r JOIN tenants t ON t.id = r.tenant_id ORDER BY t.name`
        const audit = yield* sql<{ event: string; actor: string; data: { removed: ReadonlyArray<string> } }>`
        SELECT event, actor, data FROM admin_audit_log WHERE tenant_id = ${tenantId} ORDER BY seq`
        return { rules, audit }
      }))
      assert.deepStrictEqual(after.rules, [{ tenant: "Bystander", cidr: "198.51.100.0/24" }])
      assert.deepStrictEqual(after.audit.map((row) => [row.event, row.actor]), [
        ["ip_allowlist.reset", "operator:cli"],
        ["ip_allowlist.reset", "operator:cli"]
      ])
      assert.sameMembers([...after.audit[0].data.removed], ["203.0.113.0/24", "2001:db8::/32"])
    }).pipe(Effect.scoped),
  { timeout: 180_000 }
)

it.live(
  "reset-allowlist refuses a DATA_DIR that does not exist or holds no database, creating nothing",
  () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const missing = join(dir, "no-such-folder")
      const absent = yield* run(["security", "reset-allowlist", "--tenant", "default"], { DATA_DIR: missing })
      assert.strictEqual(absent.code, 1)
      assert.strictEqual(
        absent.stderr,
        `error: DATA_DIR ${missing} does not exist: set DATA_DIR to the service's data folder, or DATABASE_URL to its PostgreSQL\n`
      )
      assert.isFalse(existsSync(missing))

      const empty = yield* run(["security", "reset-allowlist", "--tenant", "default"], { DATA_DIR: dir })
      assert.strictEqual(empty.code, 1)
      assert.strictEqual(
        empty.stderr,
        `error: DATA_DIR ${dir} holds no database: set DATA_DIR to the service's data folder, or DATABASE_URL to its PostgreSQL\n`
      )
      assert.deepStrictEqual(readdirSync(dir), [])
    }).pipe(Effect.scoped)
)
