/**
 * The `agent-platform` command tree: the root command and its shared flags
 * with every subcommand. To add a command group, import it and add it to
 * `commands` (one line each).
 */
import { Command } from "effect/cli"
import { actions } from "./commands/actions.ts"
import { agents } from "./commands/agents.ts"
import { audit } from "./commands/audit.ts"
import { login, logout, whoami } from "./commands/auth.ts"
import { chat } from "./commands/chat.ts"
import { compliance } from "./commands/compliance.ts"
import { corrections } from "./commands/corrections.ts"
import { exportCommand } from "./commands/export.ts"
import { flags } from "./commands/flags.ts"
import { health } from "./commands/health.ts"
import { keys } from "./commands/keys.ts"
import { knowledge } from "./commands/knowledge.ts"
import { report } from "./commands/report.ts"
import { rooms } from "./commands/rooms.ts"
import { scim } from "./commands/scim.ts"
import { security } from "./commands/security.ts"
import { spaces } from "./commands/spaces.ts"
import { tenants } from "./commands/tenants.ts"
import { users } from "./commands/users.ts"
import { webhooks } from "./commands/webhooks.ts"
import { root } from "./Root.ts"

const commands = [
  login,
  logout,
  whoami,
  spaces,
  agents,
  actions,
  knowledge,
  chat,
  keys,
  webhooks,
  users,
  tenants,
  flags,
  rooms,
  scim,
  compliance,
  corrections,
  exportCommand,
  report,
  audit,
  security,
  health
] as const

export const cli = root.pipe(Command.withSubcommands(commands))

export const version = "5.25.0"
