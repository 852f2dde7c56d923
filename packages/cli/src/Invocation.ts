/**
 * The command a user types to run the CLI — `agent-platform` when it is
 * installed, `pnpm cli` (or `npm run cli`, `yarn cli`) from a checkout — so
 * that help, usage errors and hints name what they would type next.
 */
import { Config, Context, Effect, Option } from "effect"
import type { HelpDoc } from "effect/cli"

/** The installed binary's name, and the root command's. */
export const binary = "agent-platform"

/** How this run was started; `agent-platform` unless the environment says otherwise. */
export const Invocation = Context.Reference<string>("@agent-platform/cli/Invocation", { defaultValue: () => binary })

/**
 * The invocation from the environment a package manager sets for a script:
 * `npm_lifecycle_event` is `cli` when the root package's `cli` script runs,
 * and `npm_config_user_agent` names the package manager.
 */
export const fromEnvironment: Effect.Effect<string> = Effect.gen(function*() {
  const script = yield* Config.option(Config.String("npm_lifecycle_event"))
  if (Option.getOrUndefined(script) !== "cli") return binary
  const agent = Option.getOrElse(yield* Config.option(Config.String("npm_config_user_agent")), () => "")
  if (agent.startsWith("npm/")) return "npm run cli"
  if (agent.startsWith("yarn/")) return "yarn cli"
  return "pnpm cli"
}).pipe(Effect.orElseSucceed(() => binary))

/** The binary's name where it starts a command line (not in `@agent-platform/sdk` or `.config/agent-platform/`). */
const commandName = new RegExp(`(?<![\\w@/.-])${binary}(?=\\s|\`|$)`, "gu")

/** `text` with every command line in it starting with `invocation`. */
export const rename = (text: string, invocation: string): string =>
  invocation === binary ? text : text.replace(commandName, invocation)

/** A help document whose usage line, examples and descriptions name `invocation`. */
export const renameInHelp = (doc: HelpDoc.HelpDoc, invocation: string): HelpDoc.HelpDoc =>
  invocation === binary ? doc : {
    ...doc,
    usage: rename(doc.usage, invocation),
    description: rename(doc.description, invocation),
    ...(doc.examples === undefined ? {} : {
      examples: doc.examples.map((example) => ({
        ...example,
        command: rename(example.command, invocation),
        ...(example.description === undefined ? {} : { description: rename(example.description, invocation) })
      }))
    })
  }

/** A command line to suggest, quoted: `` `pnpm cli keys create` `` — for hints in messages. */
export const command = (rest: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    return `\`${yield* Invocation} ${rest}\``
  })
