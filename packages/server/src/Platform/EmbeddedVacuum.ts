/**
 * Vacuuming for the embedded database. PGlite runs PostgreSQL without its
 * background processes, autovacuum among them, so nothing would ever reclaim
 * the rows that updates and deletes leave dead (tables would only grow), keep
 * the planner's statistics current, or freeze old transaction ids before the
 * 2^31 wraparound, after which PostgreSQL refuses writes.
 *
 * Once per jobs cycle, {@link vacuumDue} does what autovacuum would with its
 * default settings: `VACUUM (ANALYZE)` for a table whose dead rows exceed
 * 50 + 20 % of its live ones, or whose oldest unfrozen transaction id is over
 * 150 million transactions old; `ANALYZE` alone for one with more than 50 +
 * 10 % of its rows changed since it was last analyzed. One table per
 * statement: PGlite has one connection, so the API's queries wait for at most
 * one table's vacuum at a time. PostgreSQL servers run their own autovacuum;
 * the step exists only in embedded mode (Server.ts).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** Autovacuum's defaults: `autovacuum_vacuum_threshold`, `_scale_factor`, `_analyze_threshold`, `_scale_factor`. */
const vacuumThreshold = 50
const vacuumScale = 0.2
const analyzeThreshold = 50
const analyzeScale = 0.1
/** Transaction-id age past which a table is vacuumed to freeze it (autovacuum_freeze_max_age is 200 million). */
const freezeAge = 150_000_000

interface TableStats {
  readonly name: string
  readonly live: number
  readonly dead: number
  readonly modified: number
  readonly xid_age: number
}

/** What one pass did, per table. */
export interface VacuumPass {
  readonly vacuumed: ReadonlyArray<string>
  readonly analyzed: ReadonlyArray<string>
}

const needsVacuum = (table: TableStats) =>
  table.dead > vacuumThreshold + vacuumScale * table.live || table.xid_age > freezeAge

/** Which tables are due, and for what (a vacuumed table is analyzed with it). */
export const dueTables = (tables: ReadonlyArray<TableStats>): VacuumPass => ({
  vacuumed: tables.filter(needsVacuum).map((table) => table.name),
  analyzed: tables
    .filter((table) => !needsVacuum(table) && table.modified > analyzeThreshold + analyzeScale * table.live)
    .map((table) => table.name)
})

/** Vacuums and analyzes the tables of the current schema that are due, one statement each. */
export const vacuumDue: Effect.Effect<VacuumPass, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<TableStats>`
    SELECT s.relname AS name, s.n_live_tup::float8 AS live, s.n_dead_tup::float8 AS dead,
           s.n_mod_since_analyze::float8 AS modified, age(c.relfrozenxid)::float8 AS xid_age
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()`
  const due = dueTables(tables)
  for (const name of due.vacuumed) {
    const started = performance.now()
    yield* sql`VACUUM (ANALYZE) ${sql(name)}`
    yield* Effect.logDebug("vacuumed a table of the embedded database").pipe(
      Effect.annotateLogs({ table: name, duration_ms: Math.round(performance.now() - started) })
    )
  }
  for (const name of due.analyzed) yield* sql`ANALYZE ${sql(name)}`
  return due
})
