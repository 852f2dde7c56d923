/**
 * The compliance pack (`feature_compliance_pack`, Security Officer): decision
 * provenance of every action execution, the integrity of the two audit hash
 * chains, and the human-in-the-loop map of the catalog.
 */
import { Schema } from "effect"
import { HitlMode } from "../Actions/ActionAdmin.ts"
import { ChainIntegrity } from "../Audit/Audit.ts"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * How an execution was supervised (spec: "Supervision classification"):
 * `human_confirmed` a human confirmed it in chat (confirm mode);
 * `human_triggered_auto` a human's chat message triggered it and no
 * confirmation step was asked; `autonomous` no human in the chain (a direct
 * API-key call, an MCP tool call, an agent acting on its own); `shadow` the
 * action is in shadow mode: the resolved request was recorded and not sent.
 */
export const Supervision = Schema.Literals(["human_confirmed", "human_triggered_auto", "autonomous", "shadow"])
export type Supervision = typeof Supervision.Type

/** Where an execution came from. */
export const Channel = Schema.Literals(["direct", "mcp", "chat", "room"]).annotate({
  description:
    "`direct` POST /v1/actions/{id}/execute, `mcp` an MCP tool call, `chat` an agent in a chat, `room` an agent in a room"
})
export type Channel = typeof Channel.Type

/** A key, a user or an agent, with its name when the execution ran. */
export const Party = Schema.Struct({
  type: Schema.Literals(["key", "user", "agent"]),
  id: Schema.String,
  name: Schema.NullOr(Schema.String).annotate({ description: "The name at the time of the execution" })
}).annotate({ identifier: "ProvenanceParty" })
export type Party = typeof Party.Type

export const ConfirmedBy = Schema.Struct({
  user_id: Schema.NullOr(Schema.String).annotate({
    description:
      "The confirming user; null in a chat over an API key (a widget), whose person the platform does not know"
  }),
  key_id: Schema.NullOr(Schema.String).annotate({ description: "The API key the confirming chat ran over, if any" }),
  name: Schema.NullOr(Schema.String).annotate({ description: "The user's name, or the key's name" }),
  text: Schema.String.annotate({ description: "The confirming message, verbatim" }),
  asked: Schema.NullOr(Schema.String).annotate({
    description: "The confirmation request the human answered, verbatim"
  }),
  at: Schema.String
}).annotate({ identifier: "ConfirmedBy" })

/** The human-in-the-loop configuration of the action in force when the execution ran. */
export const HitlSnapshot = Schema.Struct({
  version: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  mode: HitlMode
}).annotate({ identifier: "HitlSnapshot" })

export const ProvenanceRow = Schema.Struct({
  execution_id: Schema.String,
  executed_at: Schema.String,
  action_id: Schema.String,
  action_name: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  chat_id: Schema.NullOr(Schema.String),
  channel: Channel,
  triggered_by: Party.annotate({
    description: "Who set the execution off: the calling key or user, or the agent that chose the action"
  }),
  on_behalf_of: Schema.NullOr(Party).annotate({
    description:
      "For an agent: whose chat or room message made it act (a user, or the key of a widget's chat); null when it acted on its own"
  }),
  confirmed_by: Schema.NullOr(ConfirmedBy),
  hitl_snapshot: HitlSnapshot,
  supervision: Supervision,
  success: Schema.Boolean,
  status_code: Schema.Int,
  remote_called: Schema.Boolean.annotate({
    description: "False in shadow mode, and when the call could not be made (e.g. a secret is missing)"
  })
}).annotate({ identifier: "ProvenanceRow" })
export type ProvenanceRow = typeof ProvenanceRow.Type

export const Provenance = Schema.Struct({
  count: Count.annotate({ description: "Rows in this page" }),
  rows: Schema.Array(ProvenanceRow),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "Pass as `cursor` for the next page; null on the last page"
  })
}).annotate({ identifier: "Provenance" })
export type Provenance = typeof Provenance.Type

export const Integrity = Schema.Struct({
  valid: Schema.Boolean.annotate({ description: "Both chains verify" }),
  audit_logs: ChainIntegrity,
  admin_audit_log: ChainIntegrity
}).annotate({ identifier: "Integrity" })
export type Integrity = typeof Integrity.Type

const bySupervision = Schema.Struct({
  human_confirmed: Count,
  human_triggered_auto: Count,
  autonomous: Count,
  shadow: Count
})

export const HitlMapEntry = Schema.Struct({
  action_id: Schema.String,
  action_name: Schema.String,
  is_active: Schema.Boolean,
  config: HitlSnapshot.annotate({ description: "The current configuration" }),
  executions: bySupervision.annotate({ description: "Executions in the period per supervision class" }),
  mismatches: Schema.Struct({
    confirm_without_confirmation: Count.annotate({
      description: "The action is configured `confirm`, and executions in the period ran without a human confirmation"
    }),
    shadow_with_real_call: Count.annotate({
      description: "The action is configured `shadow`, and executions in the period made a real remote call"
    })
  }),
  mismatch: Schema.Boolean.annotate({ description: "Any mismatch above" })
}).annotate({ identifier: "HitlMapEntry" })

export const HitlMap = Schema.Struct({
  days: Schema.Int,
  from: Schema.String,
  to: Schema.String,
  actions: Schema.Array(HitlMapEntry)
}).annotate({ identifier: "HitlMap" })
export type HitlMap = typeof HitlMap.Type

export const ExportFormat = Schema.Literals(["csv", "json"])
