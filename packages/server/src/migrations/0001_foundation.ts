/**
 * Tenants, their users and spaces, and the key-value table (the shape
 * effect's `KeyValueStore.layerSql` uses). SQL here must run
 * on PostgreSQL 15 (production) and on PGlite (PostgreSQL 18, embedded).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tenants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      feature_war_rooms boolean NOT NULL DEFAULT false,
      feature_compliance_pack boolean NOT NULL DEFAULT false,
      feature_decision_records boolean NOT NULL DEFAULT false,
      push_notifications boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX tenants_name_key ON tenants (lower(name))`
  yield* sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      email text NOT NULL,
      nombre text NOT NULL,
      password_hash text,
      role_id text NOT NULL CHECK (role_id IN ('r_user', 'r_admin', 'r_superadmin', 'r_security_officer', 'r_space_admin')),
      active boolean NOT NULL DEFAULT true,
      blocked boolean NOT NULL DEFAULT false,
      must_change_password boolean NOT NULL DEFAULT false,
      password_changed_at timestamptz NOT NULL DEFAULT now(),
      is_service_account boolean NOT NULL DEFAULT false,
      avatar_url text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_login_at timestamptz
    )`
  // Emails are unique across tenants: login takes an email and no tenant.
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`CREATE INDEX users_tenant_idx ON users (tenant_id)`
  yield* sql`
    CREATE TABLE spaces (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      code text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, code)
    )`
  yield* sql`
    CREATE TABLE kv_store (
      id text PRIMARY KEY,
      value bytea NOT NULL,
      value_type smallint NOT NULL
    )`
})
