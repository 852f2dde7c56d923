import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Queue } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as EmbeddedPostgres from "../src/Platform/EmbeddedPostgres.ts"
import { dueTables, vacuumDue } from "../src/Platform/EmbeddedVacuum.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "embedded-pg-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** Runs `use` against a layer built (and torn down) inside the test. */
const withDatabase = <A, E>(
  options: EmbeddedPostgres.LayerOptions,
  use: Effect.Effect<A, E, SqlClient.SqlClient | EmbeddedPostgres.EmbeddedDatabase>
) => Effect.scoped(Effect.provide(use, EmbeddedPostgres.layer(options)))

layer(EmbeddedPostgres.layer({ dataDir: undefined }), { timeout: "60 seconds" })("in-memory", (it) => {
  it.effect("simple and parameterized queries", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ one: number }>`SELECT 1 AS one`
      assert.deepStrictEqual(rows, [{ one: 1 }])

      yield* sql`CREATE TABLE greeting (id serial PRIMARY KEY, name text NOT NULL)`
      yield* sql`INSERT INTO greeting ${sql.insert([{ name: "ada" }, { name: "grace" }])}`
      const found = yield* sql<{ name: string }>`SELECT name FROM greeting WHERE name = ${"grace"}`
      assert.deepStrictEqual(found, [{ name: "grace" }])
      const many = yield* sql<{ name: string }>`
        SELECT name FROM greeting WHERE ${sql.in("name", ["ada", "grace"])} ORDER BY id`
      assert.deepStrictEqual(many.map((row) => row.name), ["ada", "grace"])
      const unsafe = yield* sql.unsafe<{ n: number }>("SELECT $1::int + 1 AS n", [41])
      assert.strictEqual(unsafe[0]!.n, 42)
    }))

  it.effect("types round trip", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const at = new Date("2024-05-06T07:08:09.123Z")
      const [row] = yield* sql<{
        i: number
        b: bigint | string
        t: string
        yes: boolean
        j: unknown
        ts: Date
        id: string
        arr: ReadonlyArray<string>
      }>`
        SELECT ${7}::int AS i,
               ${"9007199254740993"}::bigint AS b,
               ${"héllo"}::text AS t,
               ${true}::bool AS yes,
               ${JSON.stringify({ a: [1, "x"], n: null })}::jsonb AS j,
               ${at}::timestamptz AS ts,
               gen_random_uuid() AS id,
               ${"{a,\"b c\"}"}::text[] AS arr`
      assert.strictEqual(row!.i, 7)
      assert.strictEqual(String(row!.b), "9007199254740993")
      assert.strictEqual(row!.t, "héllo")
      assert.strictEqual(row!.yes, true)
      assert.deepStrictEqual(row!.j, { a: [1, "x"], n: null })
      assert.instanceOf(row!.ts, Date)
      assert.strictEqual(row!.ts.toISOString(), at.toISOString())
      assert.match(row!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.deepStrictEqual(row!.arr, ["a", "b c"])
    }))

  it.effect("20 concurrent transactions never interleave", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ledger (id serial PRIMARY KEY, tx int NOT NULL, step int NOT NULL)`
      const results = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (tx) =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO ledger (tx, step) VALUES (${tx}, 1)`
            yield* Effect.yieldNow
            yield* sql`INSERT INTO ledger (tx, step) VALUES (${tx}, 2)`
            const mine = yield* sql<{ step: number }>`SELECT step FROM ledger WHERE tx = ${tx} ORDER BY step`
            const total = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger`
            return { tx, steps: mine.map((row) => row.step), total: total[0]!.n }
          })),
        { concurrency: "unbounded" }
      )
      for (const result of results) assert.deepStrictEqual(result.steps, [1, 2])
      // Each transaction saw only committed rows plus its own two: totals are
      // 2, 4, ..., 40 in some order, never an odd number.
      assert.deepStrictEqual(
        results.map((result) => result.total).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => 2 * (i + 1))
      )
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger`
      assert.strictEqual(count!.n, 40)
    }))

  it.effect("a failed transaction rolls back and the next query works", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE account (id int PRIMARY KEY, balance int NOT NULL CHECK (balance >= 0))`
      yield* sql`INSERT INTO account VALUES (1, 10)`
      const exit = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE account SET balance = balance + 5 WHERE id = 1`
        yield* sql`UPDATE account SET balance = -1 WHERE id = 1`
      })).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const failedInApp = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE account SET balance = 99 WHERE id = 1`
        return yield* Effect.fail("app error" as const)
      })).pipe(Effect.flip)
      assert.strictEqual(failedInApp, "app error")
      const syntax = yield* sql`SELEC broken`.pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(syntax))
      const [row] = yield* sql<{ balance: number }>`SELECT balance FROM account WHERE id = 1`
      assert.strictEqual(row!.balance, 10)
    }))

  it.effect("LISTEN/NOTIFY delivers across pooled connections", () =>
    Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      const queue = yield* pg.listen("embedded_events")
      yield* pg.notify("embedded_events", "hello")
      const first = yield* Queue.take(queue)
      assert.strictEqual(first.channel, "embedded_events")
      assert.strictEqual(first.payload, "hello")
      // Inside a transaction use pg_notify: it is delivered on COMMIT.
      yield* pg.withTransaction(pg`SELECT pg_notify(${"embedded_events"}, ${"committed"})`)
      const second = yield* Queue.take(queue)
      assert.strictEqual(second.payload, "committed")
    }))

  it.effect("UNLISTEN on one connection keeps the channel of another", () =>
    Effect.gen(function*() {
      const { db } = yield* EmbeddedPostgres.EmbeddedDatabase
      const pg = yield* PgClient.make(EmbeddedPostgres.clientConfig(db, { maxConnections: 3 })).pipe(
        Effect.provide(Reactivity.layer)
      )
      const stays = yield* pg.listen("shared_channel")
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const leaves = yield* pg.listen("shared_channel")
        yield* pg.notify("shared_channel", "one")
        return yield* Queue.take(leaves)
      }))
      // The second listener's scope closed: it sent UNLISTEN for the channel
      // the first listener still uses.
      assert.strictEqual(first.payload, "one")
      assert.strictEqual((yield* Queue.take(stays)).payload, "one")
      yield* pg.notify("shared_channel", "two")
      assert.strictEqual((yield* Queue.take(stays)).payload, "two")
    }))

  it.effect("vector and pg_trgm extensions", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE EXTENSION IF NOT EXISTS vector`
      yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
      const [similar] = yield* sql<{ s: number }>`SELECT similarity(${"postgres"}, ${"postgre"}) AS s`
      assert.isAbove(similar!.s, 0.5)

      yield* sql`CREATE TABLE doc (id int PRIMARY KEY, title text NOT NULL, embedding vector(3) NOT NULL)`
      yield* sql`CREATE INDEX doc_title_trgm ON doc USING gin (title gin_trgm_ops)`
      yield* sql`INSERT INTO doc VALUES (1, 'apple pie', '[1,0,0]'), (2, 'banana bread', '[0,1,0]'),
                                       (3, 'apple tart', '[0.9,0.1,0]')`
      const nearest = yield* sql<{ id: number; distance: number; embedding: string }>`
        SELECT id, embedding <-> ${"[1,0,0]"}::vector AS distance, embedding::text AS embedding
        FROM doc ORDER BY embedding <-> ${"[1,0,0]"}::vector LIMIT 2`
      assert.deepStrictEqual(nearest.map((row) => row.id), [1, 3])
      assert.strictEqual(nearest[0]!.distance, 0)
      assert.strictEqual(nearest[0]!.embedding, "[1,0,0]")
      const fuzzy = yield* sql<{ id: number }>`SELECT id FROM doc WHERE title % ${"aple pie"} ORDER BY id`
      assert.deepStrictEqual(fuzzy.map((row) => row.id), [1])
    }))

  it.effect("vacuumDue vacuums a table whose updates left dead rows, and leaves a quiet one alone", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE churned (id int PRIMARY KEY, n int NOT NULL)`
      yield* sql`CREATE TABLE quiet (id int PRIMARY KEY, n int NOT NULL)`
      yield* sql`INSERT INTO churned SELECT g, 0 FROM generate_series(1, 1000) g`
      yield* sql`INSERT INTO quiet SELECT g, 0 FROM generate_series(1, 1000) g`
      yield* vacuumDue // both were just filled: analyzed, nothing dead yet
      for (let i = 0; i < 3; i++) yield* sql`UPDATE churned SET n = n + 1`
      yield* sql`UPDATE quiet SET n = 1 WHERE id <= 10`
      // Statistics reach pg_stat_* when the backend reports them (at most once a second unless forced).
      const stats = Effect.andThen(
        sql`SELECT pg_stat_force_next_flush()`,
        sql<{ name: string; dead: number; vacuumed: boolean }>`
          SELECT relname AS name, n_dead_tup::int AS dead, last_vacuum IS NOT NULL AS vacuumed
          FROM pg_stat_user_tables WHERE relname IN ('churned', 'quiet') ORDER BY relname`
      )
      const [churned, quiet] = yield* stats
      // (Page pruning may already have reclaimed a few of the 3,000 dead rows.)
      assert.isAbove(churned!.dead, 50 + 0.2 * 1000, "over autovacuum's threshold")
      assert.isAtMost(quiet!.dead, 10)
      assert.isFalse(churned!.vacuumed || quiet!.vacuumed)

      const pass = yield* vacuumDue
      assert.include(pass.vacuumed, "churned")
      assert.notInclude(pass.vacuumed, "quiet")
      const [churnedAfter, quietAfter] = yield* stats
      assert.deepStrictEqual(churnedAfter, { name: "churned", dead: 0, vacuumed: true })
      assert.isFalse(quietAfter!.vacuumed)
    }))
})

describe("data directory", () => {
  it.live("a second open of a data directory fails while the first is open", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const first = yield* Effect.scoped(Effect.gen(function*() {
        yield* EmbeddedPostgres.open({ dataDir: dir })
        assert.isTrue(Fs.existsSync(Path.join(dir, EmbeddedPostgres.lockFileName)))
        return yield* Effect.flip(Effect.scoped(EmbeddedPostgres.open({ dataDir: dir })))
      }))
      assert.strictEqual(first._tag, "DataDirLocked")
      if (first._tag === "DataDirLocked") {
        assert.strictEqual(first.pid, process.pid)
        assert.include(first.message, `DATA_DIR ${dir} is already open in this process (pid ${process.pid})`)
      }
      assert.isFalse(Fs.existsSync(Path.join(dir, EmbeddedPostgres.lockFileName)))
      yield* Effect.scoped(EmbeddedPostgres.open({ dataDir: dir }))
    }), 120_000)

  it.live("a lock held by a live process fails, a stale lock is taken over", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const lock = Path.join(dir, EmbeddedPostgres.lockFileName)
      // Our parent (the test runner) is alive; a pid near the maximum is not.
      Fs.writeFileSync(lock, `${process.ppid}\n`)
      const locked = yield* Effect.flip(Effect.scoped(EmbeddedPostgres.open({ dataDir: dir })))
      assert.strictEqual(locked._tag, "DataDirLocked")
      if (locked._tag === "DataDirLocked") {
        assert.strictEqual(locked.pid, process.ppid)
        assert.strictEqual(
          locked.message,
          `DATA_DIR ${dir} is in use by another process (pid ${process.ppid}); stop it or set DATA_DIR to another folder`
        )
      }
      assert.strictEqual(Fs.readFileSync(lock, "utf8").trim(), String(process.ppid))
      Fs.writeFileSync(lock, "2147483646\n")
      yield* Effect.scoped(Effect.gen(function*() {
        yield* EmbeddedPostgres.open({ dataDir: dir })
        assert.strictEqual(Fs.readFileSync(lock, "utf8").split("\n")[0], String(process.pid))
      }))
      assert.isFalse(Fs.existsSync(lock))
    }), 120_000)

  it.live("reopening a data directory keeps the data", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* withDatabase(
        { dataDir: dir },
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE note (id int PRIMARY KEY, body text NOT NULL)`
          yield* sql`INSERT INTO note VALUES (1, 'kept'), (2, 'also kept')`
        })
      )
      const rows = yield* withDatabase(
        { dataDir: dir },
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ body: string }>`SELECT body FROM note ORDER BY id`
        })
      )
      assert.deepStrictEqual(rows.map((row) => row.body), ["kept", "also kept"])
    }), 120_000)

  it.live("dumpDataDir then open({ loadDataDir }) yields a copy", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const copyDir = yield* tempDir
      const dump = yield* withDatabase(
        { dataDir: dir },
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE EXTENSION IF NOT EXISTS vector`
          yield* sql`CREATE TABLE item (id int PRIMARY KEY, name text NOT NULL, v vector(2))`
          yield* sql`INSERT INTO item VALUES (1, 'one', '[1,1]'), (2, 'two', '[2,2]')`
          const database = yield* EmbeddedPostgres.EmbeddedDatabase
          return yield* database.dumpDataDir()
        })
      )
      const read = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ id: number; name: string; v: string }>`SELECT id, name, v::text AS v FROM item ORDER BY id`
      })
      const expected = [{ id: 1, name: "one", v: "[1,1]" }, { id: 2, name: "two", v: "[2,2]" }]
      assert.deepStrictEqual(yield* withDatabase({ dataDir: undefined, loadDataDir: dump }, read), expected)
      assert.deepStrictEqual(yield* withDatabase({ dataDir: copyDir, loadDataDir: dump }, read), expected)
      // The copy is independent of the original and keeps its rows on reopen.
      assert.deepStrictEqual(yield* withDatabase({ dataDir: copyDir }, read), expected)
      assert.isFalse(Fs.existsSync(Path.join(copyDir, EmbeddedPostgres.lockFileName)))
    }), 120_000)

  it.live(
    "after kill -9 of the process holding it, the data directory opens at once (its lock is stale)",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // `exec sleep` replaces the shell, so nobody reaps the killed holder: it stays a zombie, as under a slow supervisor.
        const script = new URL("./HoldDataDir.ts", import.meta.url).pathname
        const shell = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn("sh", ["-c", `node --import tsx "${script}" "${dir}" & exec sleep 120`], {
              stdio: ["ignore", "pipe", "inherit"]
            })
          ),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
        const holder = yield* Effect.callback<number>((resume) => {
          let output = ""
          shell.stdout!.on("data", (chunk: Buffer) => {
            output += chunk.toString()
            const match = /holding (\d+)/.exec(output)
            if (match !== null) resume(Effect.succeed(Number(match[1])))
          })
        }).pipe(Effect.timeout("90 seconds"))
        assert.strictEqual(
          Fs.readFileSync(Path.join(dir, EmbeddedPostgres.lockFileName), "utf8").split("\n")[0],
          String(holder)
        )
        process.kill(holder, "SIGKILL")
        // Killed, not yet reaped: `kill(pid, 0)` still succeeds on it.
        const deadline = Date.now() + 10_000
        while (!Fs.readFileSync(`/proc/${holder}/stat`, "utf8").includes(") Z") && Date.now() < deadline) {
          yield* Effect.sleep("20 millis")
        }
        yield* Effect.scoped(Effect.gen(function*() {
          yield* EmbeddedPostgres.open({ dataDir: dir })
          assert.strictEqual(
            Fs.readFileSync(Path.join(dir, EmbeddedPostgres.lockFileName), "utf8").split("\n")[0],
            String(process.pid)
          )
        }))
      }),
    120_000
  )

  it.live(
    "the data directory is private whatever the umask: directories 0700, files 0600",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const previous = process.umask(0)
        yield* Effect.addFinalizer(() => Effect.sync(() => process.umask(previous)))
        Fs.chmodSync(dir, 0o777)
        Fs.writeFileSync(Path.join(dir, "left-by-an-older-version"), "x", { mode: 0o666 })
        process.umask(0)
        yield* withDatabase(
          { dataDir: dir },
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            yield* sql`CREATE TABLE private_rows (id int PRIMARY KEY, body text NOT NULL)`
            yield* sql`INSERT INTO private_rows SELECT g, repeat('x', 500) FROM generate_series(1, 2000) g`
            yield* sql`CHECKPOINT`
          })
        )
        const wrong: Array<string> = []
        const walk = (path: string) => {
          const stat = Fs.lstatSync(path)
          if (stat.isSymbolicLink()) return
          const mode = stat.mode & 0o777
          if (stat.isDirectory()) {
            if (mode !== 0o700) wrong.push(`${path} ${mode.toString(8)}`)
            for (const entry of Fs.readdirSync(path)) walk(Path.join(path, entry))
          } else if (mode !== 0o600) {
            wrong.push(`${path} ${mode.toString(8)}`)
          }
        }
        walk(dir)
        assert.deepStrictEqual(wrong.slice(0, 5), [])
      }).pipe(Effect.scoped),
    120_000
  )
})

describe("dueTables", () => {
  const table = { name: "t", live: 1000, dead: 0, modified: 0, xid_age: 1000 }
  it("follows autovacuum's default thresholds", () => {
    assert.deepStrictEqual(dueTables([{ ...table, dead: 250 }]), { vacuumed: [], analyzed: [] })
    assert.deepStrictEqual(dueTables([{ ...table, dead: 251 }]), { vacuumed: ["t"], analyzed: [] })
    assert.deepStrictEqual(dueTables([{ ...table, modified: 151 }]), { vacuumed: [], analyzed: ["t"] })
    assert.deepStrictEqual(dueTables([{ ...table, xid_age: 150_000_001 }]), { vacuumed: ["t"], analyzed: [] })
  })
})
