/** The root command and the flags every subcommand shares. */
import { Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { defaultTimeoutSeconds } from "./Transport.ts"

export const root = Command.make("agent-platform").pipe(
  Command.withSharedFlags({
    url: Flag.String("url").pipe(
      Flag.withDescription(
        "Base URL of the service (default: AGENT_PLATFORM_URL, the logged-in server, or http://127.0.0.1:8080)"
      ),
      Flag.optional
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print machine-readable JSON instead of tables"),
      Flag.withDefault(false)
    ),
    timeout: Flag.Finite("timeout").pipe(
      Flag.withDescription(`Seconds to wait for the service to answer a request (default ${defaultTimeoutSeconds})`),
      Flag.withSchema(Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(86_400))),
      Flag.withDefault(defaultTimeoutSeconds)
    )
  }),
  Command.withDescription("Administer an Enterprise Agent Platform service")
)
