/**
 * The database: PostgreSQL through `@effect/sql-pg` when `DATABASE_URL` is
 * set, else the embedded PGlite database in `DATA_DIR` through the same
 * driver (see EmbeddedPostgres.ts). Migrations run at start.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import * as Migrator from "effect/sql/Migrator"
import { migrations } from "../migrations/index.ts"
import { defaultDatabasePoolSize, ServerConfig } from "./Config.ts"
import * as EmbeddedPostgres from "./EmbeddedPostgres.ts"
import * as PgFloat4Arrays from "./PgFloat4Arrays.ts"

/** Which backend serves the database, for the few places that must know. */
export class DatabaseMode extends Context.Service<DatabaseMode, {
  readonly kind: "postgres" | "embedded"
}>()("@agent-platform/server/Platform/DatabaseMode") {}

/** Real PostgreSQL at `url`, with at most `poolSize` connections from this process. */
export const layerPostgres = (url: PgClient.PgPoolConfig["url"], poolSize = defaultDatabasePoolSize) =>
  Layer.merge(
    PgClient.layer({
      url,
      maxConnections: poolSize,
      applicationName: "agent-platform",
      types: PgFloat4Arrays.registry
    }),
    Layer.succeed(DatabaseMode, { kind: "postgres" })
  )

/** Embedded PGlite in `dataDir` (or in memory when undefined). */
export const layerEmbedded = (options: EmbeddedPostgres.LayerOptions) =>
  Layer.merge(EmbeddedPostgres.layer(options), Layer.succeed(DatabaseMode, { kind: "embedded" }))

/** The backend chosen by the configuration. */
export const DatabaseLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return Option.match(config.databaseUrl, {
    onNone: () => layerEmbedded({ dataDir: config.dataDir }),
    onSome: (url) => layerPostgres(url, config.databasePoolSize)
  })
}))

const runMigrations = Migrator.make({})({ loader: migrations, table: "schema_migrations" })

/**
 * Applies pending migrations. Replicas starting together race for the
 * migrations lock; the losers retry until the winner has finished.
 */
export const migrate = runMigrations.pipe(
  Effect.retry({
    while: (error) => error._tag === "MigrationError" && error.kind === "Locked",
    schedule: Schedule.spaced("500 millis"),
    times: 60
  }),
  Effect.tap((applied) =>
    applied.length === 0
      ? Effect.void
      : Effect.logInfo(
        `applied ${applied.length} migration(s): ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`
      )
  )
)

/** Runs the migrations when built; everything that queries depends on it. */
export const MigrationsLive = Layer.effectDiscard(migrate)
