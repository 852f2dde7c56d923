/**
 * `compliance export|integrity`: the compliance pack (Security Officer,
 * `feature_compliance_pack`). `integrity` exits 1 when a chain does not verify.
 */
import type { Audit } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"
import { AuditChainBroken } from "./audit.ts"
import { fromFlag, outFlag, saveDownload, toFlag } from "./export.ts"

const exportProvenance = Command.make(
  "export",
  {
    format: Flag.Literals("format", ["csv", "json"]).pipe(
      Flag.withDescription("csv (RFC 4180) or json"),
      Flag.withDefault("csv" as const)
    ),
    from: fromFlag,
    to: toFlag,
    out: outFlag
  },
  ({ format, from, out, to }) =>
    saveDownload(
      out,
      (options) =>
        Sdk.downloadProvenance(options, { format, from: Option.getOrUndefined(from), to: Option.getOrUndefined(to) })
    )
).pipe(Command.withDescription("Download the provenance report of every action execution in the period"))

type Chain = Audit.ChainIntegrity & { readonly name: string }

const integrity = Command.make(
  "integrity",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    const result = yield* Connection.withSession(({ client }) => client.api.compliance.integrity())
    if (json) {
      yield* Output.json(result)
    } else {
      yield* Output.table<Chain>([
        ["chain", (chain) => chain.name],
        ["valid", (chain) => (chain.valid ? "yes" : "NO")],
        ["checked", (chain) => String(chain.entries_checked)],
        ["invalid", (chain) => String(chain.entries_invalid)],
        ["first invalid", (chain) => Output.orDash(chain.first_invalid_id)],
        ["head hash", (chain) => Output.orDash(chain.head_hash)]
      ], [{ name: "audit_logs", ...result.audit_logs }, { name: "admin_audit_log", ...result.admin_audit_log }])
    }
    if (!result.valid) {
      const broken = [result.audit_logs, result.admin_audit_log].find((chain) => !chain.valid)
      return yield* new AuditChainBroken({
        message: `a hash chain does not verify (first invalid: ${
          Output.orDash(broken?.first_invalid_id ?? null)
        }): the audit log was altered`
      })
    }
    if (!json) yield* Console.log("\nBoth chains verify.")
  })
).pipe(Command.withDescription("Verify both audit hash chains (Security Officer); exit code 1 if a row was altered"))

export const compliance = Command.make("compliance").pipe(
  Command.withDescription("The compliance pack (Security Officer)"),
  Command.withSubcommands([exportProvenance, integrity])
)
