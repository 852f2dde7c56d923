/** The root command and the flags every subcommand shares. */
import { Command, Flag } from "effect/cli"

export const root = Command.make("agent-platform").pipe(
  Command.withSharedFlags({
    url: Flag.String("url").pipe(
      Flag.withDescription("Base URL of the service (default: AGENT_PLATFORM_URL, the logged-in server, or http://127.0.0.1:8080)"),
      Flag.optional
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print machine-readable JSON instead of tables"),
      Flag.withDefault(false)
    )
  }),
  Command.withDescription("Administer an Enterprise Agent Platform service")
)
