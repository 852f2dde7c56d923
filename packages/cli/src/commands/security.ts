/**
 * `security reset-allowlist --tenant <name or id>`: the operator's way back
 * into a tenant whose IP allowlist shuts everyone out. It works on the
 * database itself, not through the API (nobody can sign in): the one of
 * `DATABASE_URL`, or the embedded database in `DATA_DIR` (stop the service
 * first; the embedded database admits one process).
 */
import { OperatorDatabaseLive, resetAllowlist } from "@agent-platform/server/SecurityPolicies/AllowlistRecovery.ts"
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import * as References from "effect/References"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const resetAllowlistCommand = Command.make(
  "reset-allowlist",
  {
    tenant: Flag.String("tenant").pipe(Flag.withDescription("The tenant whose allowlist to delete: its name or id"))
  },
  Effect.fnUntraced(function*({ tenant }) {
    const { json } = yield* root
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
