/**
 * `security reset-allowlist --tenant <name or id>`: the operator's way back
 * into a tenant whose IP allowlist shuts everyone out. It works on the
 * database itself, not through the API (nobody can sign in): the one of
 * `DATABASE_URL`, or the embedded database in `DATA_DIR` (stop the service
 * first; the embedded database admits one process).
 */
import { OperatorDatabaseLive, resetAllowlist } from "@agent-platform/server/SecurityPolicies/AllowlistRecovery.ts"
import { Config, Console, Effect, FileSystem, Option, Path, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import * as References from "effect/References"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

/** Neither DATABASE_URL nor a DATA_DIR holding the embedded database names a database to recover. */
export class NoDatabase extends Schema.TaggedError<NoDatabase>()("NoDatabase", { message: Schema.String }) {}

/** The service's default DATA_DIR (see the server's configuration). */
const defaultDataDir = "./.data"

/**
 * Refuses an embedded database that is not there: opening a missing or empty
 * DATA_DIR would create a fresh database, and the tenant would then be
 * "unknown" in it — and the fresh folder left behind.
 */
const requireDatabase = Effect.gen(function*() {
  const databaseUrl = yield* Config.option(Config.String("DATABASE_URL")).pipe(Effect.orDie)
  if (Option.isSome(databaseUrl)) return
  const configured = Option.filter(
    yield* Config.option(Config.String("DATA_DIR")).pipe(Effect.orDie),
    (dir) => dir.length > 0
  )
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = path.resolve(Option.getOrElse(configured, () => defaultDataDir))
  const named = Option.isSome(configured) ? `DATA_DIR ${dir}` : `DATA_DIR (unset, so ${dir})`
  const fix = "set DATA_DIR to the service's data folder, or DATABASE_URL to its PostgreSQL"
  if (!(yield* fs.exists(dir).pipe(Effect.orElseSucceed(() => false)))) {
    return yield* new NoDatabase({ message: `${named} does not exist: ${fix}` })
  }
  if (!(yield* fs.exists(path.join(dir, "PG_VERSION")).pipe(Effect.orElseSucceed(() => false)))) {
    return yield* new NoDatabase({ message: `${named} holds no database: ${fix}` })
  }
})

const resetAllowlistCommand = Command.make(
  "reset-allowlist",
  {
    tenant: Flag.String("tenant").pipe(Flag.withDescription("The tenant whose allowlist to delete: its name or id"))
  },
  Effect.fnUntraced(function*({ tenant }) {
    const { json } = yield* root
    yield* requireDatabase
    const result = yield* resetAllowlist(tenant).pipe(
      Effect.provide(OperatorDatabaseLive),
      // The database's own start-up lines (migrations) are not this command's output.
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
    if (json) return yield* Output.json(result)
    yield* Console.log(
      result.removed.length === 0
        ? `Tenant ${
          Output.printable(result.tenant.name)
        } (${result.tenant.id}) had no allowlist rules: every address may sign in.`
        : `Removed ${result.removed.length} allowlist rule(s) of tenant ${
          Output.printable(result.tenant.name)
        } (${result.tenant.id}): ${
          result.removed.join(", ")
        }. Every address may sign in again; the reset is in the tenant's admin audit log.`
    )
  })
).pipe(
  Command.withDescription(
    "Delete every IP allowlist rule of a tenant, directly in the database (DATABASE_URL, or DATA_DIR with the service stopped)"
  ),
  Command.withExamples([{
    command: "DATABASE_URL=postgres://... agent-platform security reset-allowlist --tenant acme",
    description: "Let every address sign in to tenant acme again"
  }])
)

export const security = Command.make("security").pipe(
  Command.withDescription("Operator recovery of a tenant's security policies"),
  Command.withSubcommands([resetAllowlistCommand])
)
