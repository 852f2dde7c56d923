/**
 * Action executions (the record every direct or agent-run execution leaves,
 * read later by compliance) and outbound webhooks: subscriptions and the
 * durable delivery queue the jobs worker drains.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE action_executions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      action_id uuid NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
      action_name text NOT NULL,
      caller_kind text NOT NULL CHECK (caller_kind IN ('key', 'user')),
      caller_id text NOT NULL,
      params_digest text NOT NULL,
      status_code integer NOT NULL,
      success boolean NOT NULL,
      error text,
      duration_ms integer NOT NULL,
      supervision text NOT NULL
        CHECK (supervision IN ('human_confirmed', 'human_triggered_auto', 'autonomous', 'shadow')),
      chat_id text,
      confirmation_text text,
      confirmation_snapshot jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX action_executions_tenant_idx ON action_executions (tenant_id, created_at)`
  yield* sql`CREATE INDEX action_executions_action_idx ON action_executions (action_id, created_at)`
  yield* sql`
    CREATE TABLE webhook_subscriptions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      name text NOT NULL,
      url text NOT NULL,
      event_filter text NOT NULL DEFAULT '*' CHECK (event_filter IN ('on_action_executed', 'on_action_failed', '*')),
      signing_secret text,
      is_active boolean NOT NULL DEFAULT true,
      total_delivered integer NOT NULL DEFAULT 0,
      total_dead_letter integer NOT NULL DEFAULT 0,
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_subscriptions_tenant_idx ON webhook_subscriptions (tenant_id, created_at)`
  // `seq` orders the log and is its cursor: timestamps alone tie and lose microseconds in JavaScript.
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
      event text NOT NULL CHECK (event IN ('on_action_executed', 'on_action_failed')),
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'delivered', 'dead_letter')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      claim_token uuid,
      last_status_code integer,
      last_error text,
      last_duration_ms integer,
      last_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (subscription_id, seq)`
  // The worker's two claim conditions, each on its own small partial index.
  yield* sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (locked_until) WHERE status = 'delivering'`
})
