/**
 * SCIM provisioning: the SCIM attributes of users (the users table stays the
 * one list of the tenant's users), groups and their members, and the
 * group-to-role mappings.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // `scim_user_name` is null for users created on the admin surface: their userName is their email.
  // `scim_attributes` holds the SCIM attributes that have no column of their own (emails, phoneNumbers,
  // addresses, the enterprise extension, ...), as normalized by the service.
  // `scim_managed`: created through SCIM, so role mappings decide the role.
  yield* sql`
    ALTER TABLE users
      ADD COLUMN scim_user_name text,
      ADD COLUMN scim_attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN scim_managed boolean NOT NULL DEFAULT false`
  // userName is unique in the tenant, case-insensitively, whichever way the user was created.
  yield* sql`CREATE UNIQUE INDEX users_tenant_user_name_key ON users (tenant_id, lower(COALESCE(scim_user_name, email)))`
  yield* sql`CREATE INDEX users_tenant_external_id_idx ON users (tenant_id, external_id) WHERE external_id IS NOT NULL`
  yield* sql`
    CREATE TABLE scim_groups (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      display_name text NOT NULL,
      external_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX scim_groups_tenant_display_name_key ON scim_groups (tenant_id, lower(display_name))`
  yield* sql`CREATE INDEX scim_groups_tenant_created_idx ON scim_groups (tenant_id, created_at)`
  yield* sql`
    CREATE TABLE scim_group_members (
      group_id uuid NOT NULL REFERENCES scim_groups (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_id, user_id)
    )`
  yield* sql`CREATE INDEX scim_group_members_user_idx ON scim_group_members (user_id)`
  yield* sql`
    CREATE TABLE scim_role_mappings (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      group_display_name text NOT NULL,
      role_id text NOT NULL CHECK (role_id IN ('r_user', 'r_admin', 'r_security_officer', 'r_space_admin')),
      position integer NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX scim_role_mappings_key ON scim_role_mappings (tenant_id, lower(group_display_name))`
})
