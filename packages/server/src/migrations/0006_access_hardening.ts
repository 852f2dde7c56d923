/**
 * Access hardening (issue #8):
 * - the platform tenant, marked so that only its r_superadmin creates tenants
 *   (the oldest tenant is the one bootstrap made);
 * - a trigger that tells every replica when a user's role or state changes,
 *   whichever code path changed it, so that the verified-key cache drops the
 *   user's keys at once (Keys/VerifiedKeys.ts; the channel and topic are
 *   those of Platform/Notifications.ts and VerifiedKeys' `key_cache`);
 * - emails unique within a tenant, not across tenants: a tenant creating a
 *   user must not learn that the address exists in another tenant (sign-in
 *   checks the password against each account of the address);
 * - sign-in attempts claimed before their password is checked (pending until
 *   released), so that concurrent attempts are counted exactly.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tenants ADD COLUMN is_platform boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE tenants SET is_platform = true WHERE id = (SELECT id FROM tenants ORDER BY created_at, id LIMIT 1)`
  yield* sql`CREATE UNIQUE INDEX tenants_one_platform ON tenants (is_platform) WHERE is_platform`
  yield* sql`
    CREATE FUNCTION users_notify_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('agent_platform_events', 'key_cache:owner:' || COALESCE(NEW.id, OLD.id)::text);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER users_access_changed AFTER UPDATE OF role_id, active, blocked ON users
    FOR EACH ROW WHEN (OLD.role_id IS DISTINCT FROM NEW.role_id OR OLD.active IS DISTINCT FROM NEW.active
      OR OLD.blocked IS DISTINCT FROM NEW.blocked)
    EXECUTE FUNCTION users_notify_access_changed()`
  yield* sql`
    CREATE TRIGGER users_deleted AFTER DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION users_notify_access_changed()`
  yield* sql`DROP INDEX users_email_key`
  yield* sql`CREATE UNIQUE INDEX users_tenant_email_key ON users (tenant_id, lower(email))`
  yield* sql`CREATE INDEX users_email_idx ON users (lower(email))`
  yield* sql`
    ALTER TABLE users
      ADD COLUMN pending_logins integer NOT NULL DEFAULT 0,
      ADD COLUMN pending_logins_until timestamptz`
})
