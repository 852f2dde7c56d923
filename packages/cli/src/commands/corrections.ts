/** `corrections list --agent AGENT`: an agent's decision records (`feature_decision_records`). */
import type { Corrections } from "@agent-platform/domain"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const excerpt = (text: string) => {
  const line = Output.printable(text.replace(/\s+/g, " "))
  return line.length > 40 ? `${line.slice(0, 39)}…` : line
}

const list = Command.make(
  "list",
  {
    agent: Flag.String("agent").pipe(Flag.withDescription("The agent (its name or id)")),
    status: Flag.Literals("status", ["open", "accepted", "rejected"]).pipe(
      Flag.withDescription("Only records in this state"),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ agent, status }) {
    const { json } = yield* root
    const result = yield* Connection.withSession(({ client }) =>
      Effect.flatMap(Lookup.agentAsUser(client, agent), ({ id }) =>
        client.api.corrections.listForAgent({
          params: { id },
          query: Option.isSome(status) ? { status: status.value } : {}
        }))
    )
    if (json) return yield* Output.json(result)
    yield* Output.table<Corrections.DecisionRecord>([
      ["id", (c) => c.id],
      ["status", (c) => c.status],
      ["created", (c) => c.created_at.slice(0, 19).replace("T", " ")],
      ["original", (c) => excerpt(c.original_output)],
      ["corrected", (c) => excerpt(c.corrected_output)]
    ], result.corrections)
  })
).pipe(Command.withDescription("List an agent's decision records (corrections), newest first"))

export const corrections = Command.make("corrections").pipe(
  Command.withDescription("Decision records: human corrections of agent answers"),
  Command.withSubcommands([list])
)
