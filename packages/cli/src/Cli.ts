/** The `agent-platform` command tree: the root command and its shared flags with every subcommand. */
import { Command } from "effect/cli"
import { audit } from "./commands/audit.ts"
import { login, logout, whoami } from "./commands/auth.ts"
import { chat } from "./commands/chat.ts"
import { health } from "./commands/health.ts"
import { keys } from "./commands/keys.ts"
import { knowledge } from "./commands/knowledge.ts"
import { users } from "./commands/users.ts"
import { root } from "./Root.ts"

export const cli = root.pipe(Command.withSubcommands([login, logout, whoami, keys, users, audit, health, chat, knowledge]))

export const version = "5.25.0"
