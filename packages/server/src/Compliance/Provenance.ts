/**
 * Provenance rows as users read them: the JSON row of the API, the flat CSV
 * row of the export, and the opaque page cursor.
 */
import type { Compliance } from "@agent-platform/domain"
import type { Cell } from "../Exports/Csv.ts"
import type { Position, ProvenanceRecord } from "./ComplianceRepo.ts"

export const toProvenanceRow = (r: ProvenanceRecord): Compliance.ProvenanceRow => ({
  execution_id: r.id,
  executed_at: r.created_at.toISOString(),
  action_id: r.action_id,
  action_name: r.action_name,
  agent_id: r.agent_id,
  chat_id: r.chat_id,
  channel: r.channel,
  triggered_by: { type: r.trigger_type, id: r.trigger_id, name: r.trigger_name },
  on_behalf_of: r.on_behalf_type === null || r.on_behalf_id === null
    ? null
    : { type: r.on_behalf_type, id: r.on_behalf_id, name: r.on_behalf_name },
  confirmed_by: r.confirmation_text === null
    ? null
    : {
      user_id: r.confirmed_by_user_id,
      key_id: r.confirmed_by_key_id,
      name: r.confirmed_by_name,
      text: r.confirmation_text,
      asked: r.confirmation_asked,
      at: (r.confirmed_at ?? r.created_at).toISOString()
    },
  hitl_snapshot: { version: r.hitl_version, mode: r.hitl_mode },
  supervision: r.supervision,
  success: r.success,
  status_code: r.status_code,
  remote_called: r.remote_called
})

/** The export's columns: the row, nested values flattened. */
export const csvHeader = [
  "execution_id",
  "executed_at",
  "action_id",
  "action_name",
  "agent_id",
  "chat_id",
  "channel",
  "triggered_by_type",
  "triggered_by_id",
  "triggered_by_name",
  "on_behalf_of_type",
  "on_behalf_of_id",
  "on_behalf_of_name",
  "confirmed_by_user_id",
  "confirmed_by_key_id",
  "confirmed_by_name",
  "confirmation_text",
  "confirmation_asked",
  "confirmed_at",
  "hitl_version",
  "hitl_mode",
  "supervision",
  "success",
  "status_code",
  "remote_called"
] as const

export const toCsvRow = (r: ProvenanceRecord): ReadonlyArray<Cell> => [
  r.id,
  r.created_at.toISOString(),
  r.action_id,
  r.action_name,
  r.agent_id,
  r.chat_id,
  r.channel,
  r.trigger_type,
  r.trigger_id,
  r.trigger_name,
  r.on_behalf_type,
  r.on_behalf_id,
  r.on_behalf_name,
  r.confirmed_by_user_id,
  r.confirmed_by_key_id,
  r.confirmed_by_name,
  r.confirmation_text,
  r.confirmation_asked,
  r.confirmation_text === null ? null : (r.confirmed_at ?? r.created_at).toISOString(),
  r.hitl_version,
  r.hitl_mode,
  r.supervision,
  r.success,
  r.status_code,
  r.remote_called
]

export const encodeCursor = (position: Position): string =>
  Buffer.from(`${position.atMicros}.${position.seq}`).toString("base64url")

/** The position a cursor names, or undefined for one this server did not issue. */
export const decodeCursor = (cursor: string): Position | undefined => {
  const match = /^(\d{1,20})\.(\d{1,19})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  return match === null ? undefined : { atMicros: match[1], seq: match[2] }
}
