/** `audit verify`: re-hash the tenant's audit chains; exit code 1 when a row does not verify. */
import type { Audit } from "@agent-platform/domain"
import { Console, Effect, Schema } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

/** At least one audit row's hash does not match: the chain was altered. */
export class AuditChainBroken extends Schema.TaggedError<AuditChainBroken>()("AuditChainBroken", {
  message: Schema.String
}) {}

type Chain = Omit<typeof Audit.ChainIntegrity.Type, "valid" | "head_hash" | "verified_at"> & { readonly name: string }

const verify = Command.make(
  "verify",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    const result = yield* Connection.withSession(({ client }) => client.api.audit.verify())
    if (json) {
      yield* Output.json(result)
    } else {
      const chains: ReadonlyArray<Chain> = [
        { name: "audit_logs", ...result.chains.audit_logs },
        { name: "admin_audit_log", ...result.chains.admin_audit_log },
        { name: "total", ...result }
      ]
      yield* Output.table<Chain>([
        ["chain", (chain) => chain.name],
        ["checked", (chain) => String(chain.entries_checked)],
        ["invalid", (chain) => String(chain.entries_invalid)],
        ["first invalid", (chain) => Output.orDash(chain.first_invalid_id)]
      ], chains)
    }
    if (result.entries_invalid > 0) {
      return yield* new AuditChainBroken({
        message: `${result.entries_invalid} of ${result.entries_checked} audit entries do not verify (first: ${
          Output.orDash(result.first_invalid_id)
        }): the audit log was altered`
      })
    }
    if (!json) yield* Console.log(`\nAll ${result.entries_checked} entries verify.`)
  })
).pipe(Command.withDescription("Verify the audit hash chains (Security Officer); exit code 1 if any entry was altered"))

export const audit = Command.make("audit").pipe(
  Command.withDescription("Audit log integrity"),
  Command.withSubcommands([verify])
)
