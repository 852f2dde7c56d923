/**
 * Identity and access: sessions, API keys, security policies, MFA and
 * lockout state, Space Admin assignments, and the two audit hash chains.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE users
      ADD COLUMN failed_logins integer NOT NULL DEFAULT 0,
      ADD COLUMN locked_until timestamptz,
      ADD COLUMN mfa_enabled boolean NOT NULL DEFAULT false,
      ADD COLUMN mfa_secret text,
      ADD COLUMN mfa_pending_secret text,
      ADD COLUMN mfa_last_step bigint,
      ADD COLUMN push_opt_out boolean NOT NULL DEFAULT false,
      ADD COLUMN external_id text,
      ADD COLUMN given_name text,
      ADD COLUMN family_name text,
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()`
  yield* sql`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      ip text,
      user_agent text
    )`
  yield* sql`CREATE INDEX sessions_user_idx ON sessions (user_id) WHERE revoked_at IS NULL`
  yield* sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      name text NOT NULL,
      key_prefix text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      scopes text[] NOT NULL,
      space_id uuid REFERENCES spaces (id) ON DELETE CASCADE,
      rate_limit_rpm integer NOT NULL DEFAULT 300 CHECK (rate_limit_rpm > 0),
      is_active boolean NOT NULL DEFAULT true,
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at)`
  yield* sql`
    CREATE TABLE password_policies (
      tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
      min_length integer NOT NULL DEFAULT 12,
      require_uppercase boolean NOT NULL DEFAULT true,
      require_lowercase boolean NOT NULL DEFAULT true,
      require_digit boolean NOT NULL DEFAULT true,
      require_symbol boolean NOT NULL DEFAULT false,
      max_age_days integer,
      lockout_threshold integer NOT NULL DEFAULT 5,
      lockout_minutes integer NOT NULL DEFAULT 15,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE ip_allowlist (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      cidr text NOT NULL,
      description text,
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, cidr)
    )`
  yield* sql`
    CREATE TABLE space_admin_assignments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (user_id, space_id)
    )`
  // The two hash chains share a shape: each row stores SHA-256(prev_hash + canonical JSON of the row).
  for (const table of ["audit_logs", "admin_audit_log"]) {
    yield* sql`
      CREATE TABLE ${sql(table)} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        event text NOT NULL,
        actor text NOT NULL,
        target text,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        ip text,
        created_at timestamptz NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        UNIQUE (tenant_id, seq)
      )`
  }
})
