/**
 * Compliance, decision records and exports: the versioned human-in-the-loop
 * configuration of actions (`hitl_mode`, its snapshots), the provenance every
 * execution record carries, corrections (decision records) and the ROI
 * report's tenant settings.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // `requires_confirmation` becomes `hitl_mode = 'confirm'`; the column stays, derived, for readers of the old name.
  yield* sql`
    ALTER TABLE actions
      ADD COLUMN hitl_mode text NOT NULL DEFAULT 'auto' CHECK (hitl_mode IN ('auto', 'confirm', 'shadow')),
      ADD COLUMN hitl_version integer NOT NULL DEFAULT 1 CHECK (hitl_version >= 1)`
  yield* sql`UPDATE actions SET hitl_mode = 'confirm' WHERE requires_confirmation`
  yield* sql`ALTER TABLE actions DROP COLUMN requires_confirmation`
  yield* sql`ALTER TABLE actions ADD COLUMN requires_confirmation boolean GENERATED ALWAYS AS (hitl_mode = 'confirm') STORED`

  // One row per version of an action's configuration: what was in force, from when, set by whom.
  yield* sql`
    CREATE TABLE action_hitl_versions (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      action_id uuid NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
      version integer NOT NULL,
      mode text NOT NULL CHECK (mode IN ('auto', 'confirm', 'shadow')),
      changed_by text NOT NULL,
      changed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (action_id, version)
    )`
  yield* sql`
    INSERT INTO action_hitl_versions (tenant_id, action_id, version, mode, changed_by, changed_at)
    SELECT tenant_id, id, 1, hitl_mode, 'system', created_at FROM actions`

  // Provenance: who triggered (with names as they were), for whom, who confirmed, the configuration in force.
  // `seq` orders the record and is the provenance cursor (timestamps tie).
  yield* sql`
    ALTER TABLE action_executions
      ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
      ADD COLUMN channel text NOT NULL DEFAULT 'direct' CHECK (channel IN ('direct', 'mcp', 'chat', 'room')),
      ADD COLUMN trigger_type text CHECK (trigger_type IN ('key', 'user', 'agent')),
      ADD COLUMN trigger_id text,
      ADD COLUMN trigger_name text,
      ADD COLUMN on_behalf_type text CHECK (on_behalf_type IN ('key', 'user')),
      ADD COLUMN on_behalf_id text,
      ADD COLUMN on_behalf_name text,
      ADD COLUMN agent_id uuid,
      ADD COLUMN space_id uuid,
      ADD COLUMN confirmed_by_user_id uuid,
      ADD COLUMN confirmed_by_key_id uuid,
      ADD COLUMN confirmed_by_name text,
      ADD COLUMN confirmation_asked text,
      ADD COLUMN confirmed_at timestamptz,
      ADD COLUMN hitl_version integer NOT NULL DEFAULT 1,
      ADD COLUMN hitl_mode text NOT NULL DEFAULT 'auto' CHECK (hitl_mode IN ('auto', 'confirm', 'shadow')),
      ADD COLUMN remote_called boolean NOT NULL DEFAULT true,
      ADD COLUMN shadow_request jsonb`
  yield* sql`
    UPDATE action_executions SET
      trigger_type = caller_kind, trigger_id = caller_id,
      channel = CASE WHEN chat_id IS NULL THEN 'direct' ELSE 'chat' END,
      confirmed_at = CASE WHEN confirmation_text IS NULL THEN NULL ELSE created_at END`
  yield* sql`ALTER TABLE action_executions ALTER COLUMN trigger_type SET NOT NULL, ALTER COLUMN trigger_id SET NOT NULL`
  yield* sql`CREATE INDEX action_executions_provenance_idx ON action_executions (tenant_id, created_at, seq)`

  yield* sql`
    CREATE TABLE corrections (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      chat_id uuid NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
      message_id uuid NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      question text,
      original_output text NOT NULL,
      corrected_output text NOT NULL,
      reason text,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'rejected')),
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      resolved_by uuid REFERENCES users (id) ON DELETE SET NULL,
      resolved_at timestamptz,
      knowledge_file_id uuid REFERENCES knowledge_files (id) ON DELETE SET NULL
    )`
  yield* sql`CREATE INDEX corrections_agent_idx ON corrections (tenant_id, agent_id, created_at)`

  yield* sql`
    CREATE TABLE tenant_roi_settings (
      tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
      minutes_saved_per_message double precision NOT NULL DEFAULT 2,
      minutes_saved_per_action double precision NOT NULL DEFAULT 5,
      token_cost_per_1k double precision,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
