/**
 * A process that opens an embedded data directory and holds it until killed,
 * for the stale-lock test: `node --import tsx HoldDataDir.ts <dir>` prints
 * `holding <pid>` once the database is open.
 */
import { Effect } from "effect"
import * as EmbeddedPostgres from "../src/Platform/EmbeddedPostgres.ts"

const dataDir = process.argv[2]!

Effect.runFork(Effect.scoped(Effect.gen(function*() {
  yield* EmbeddedPostgres.open({ dataDir })
  yield* Effect.sync(() => process.stdout.write(`holding ${process.pid}\n`))
  return yield* Effect.never
})))
