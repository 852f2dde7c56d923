/**
 * The catalog: agents (grouped into spaces), the tenant's actions, which
 * agent may run which action, and tenant secrets (encrypted) that action
 * headers reference.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      summary text NOT NULL DEFAULT '',
      instructions text,
      is_primary boolean NOT NULL DEFAULT false,
      always_on boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX agents_space_idx ON agents (tenant_id, space_id)`
  // One primary agent per space.
  yield* sql`CREATE UNIQUE INDEX agents_one_primary_per_space ON agents (space_id) WHERE is_primary`
  yield* sql`
    CREATE TABLE actions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      http_method text NOT NULL CHECK (http_method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
      url text NOT NULL,
      headers jsonb NOT NULL DEFAULT '{}'::jsonb,
      parameters jsonb NOT NULL DEFAULT '[]'::jsonb,
      is_active boolean NOT NULL DEFAULT true,
      requires_confirmation boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX actions_tenant_idx ON actions (tenant_id, is_active)`
  yield* sql`
    CREATE TABLE agent_actions (
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      action_id uuid NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
      PRIMARY KEY (agent_id, action_id)
    )`
  yield* sql`CREATE INDEX agent_actions_action_idx ON agent_actions (action_id)`
  yield* sql`
    CREATE TABLE tenant_secrets (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      name text NOT NULL,
      ciphertext text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, name)
    )`
})
