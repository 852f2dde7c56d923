/**
 * The agent lists of `GET /v1/agents` are cached on every replica
 * (Agents/AgentLists.ts). The service's own changes drop them everywhere
 * before they answer; these triggers drop a tenant's lists whenever its agents
 * or spaces change by any other path too (another version of the service, SQL
 * by hand), as soon as the change commits. The channel and topic are those of
 * Platform/Notifications.ts and Platform/ReplicaCaches.ts.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION agents_notify_lists_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('agent_platform_events', 'key_cache:drop:agents/' || COALESCE(NEW.tenant_id, OLD.tenant_id)::text);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER agents_lists_changed AFTER INSERT OR UPDATE OR DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION agents_notify_lists_changed()`
  yield* sql`
    CREATE TRIGGER spaces_lists_changed AFTER UPDATE OR DELETE ON spaces
    FOR EACH ROW EXECUTE FUNCTION agents_notify_lists_changed()`
})
