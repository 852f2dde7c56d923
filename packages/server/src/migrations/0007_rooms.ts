/**
 * Work rooms: blueprints, rooms and their participants (with presence), the
 * author of human chat messages, the minute-taking role of agents, and the
 * invitations they bring: in-app notifications, Web Push subscriptions and
 * the durable push delivery queue.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // The always-on agents seeded per space write one part of a room's minutes each.
  yield* sql`ALTER TABLE agents ADD COLUMN minutes_role text CHECK (minutes_role IN ('summary', 'decisions'))`
  // Seeding is idempotent under concurrency: one agent per role and space.
  yield* sql`CREATE UNIQUE INDEX agents_minutes_role_key ON agents (space_id, minutes_role) WHERE minutes_role IS NOT NULL`

  // Human messages carry their author (the engine's own messages leave it null).
  yield* sql`ALTER TABLE chat_messages ADD COLUMN user_id uuid REFERENCES users (id) ON DELETE SET NULL`

  yield* sql`
    CREATE TABLE room_blueprints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      lifecycle text NOT NULL CHECK (lifecycle IN ('ephemeral', 'persistent')),
      -- Set on the blueprints seed-defaults makes: one of each per space.
      seeded_as text CHECK (seeded_as IN ('ephemeral', 'persistent')),
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX room_blueprints_tenant_idx ON room_blueprints (tenant_id, created_at)`
  yield* sql`CREATE UNIQUE INDEX room_blueprints_seeded_key ON room_blueprints (space_id, seeded_as) WHERE seeded_as IS NOT NULL`
  yield* sql`
    CREATE TABLE room_blueprint_agents (
      blueprint_id uuid NOT NULL REFERENCES room_blueprints (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      always_on boolean NOT NULL DEFAULT false,
      position integer NOT NULL,
      PRIMARY KEY (blueprint_id, agent_id)
    )`

  // The room's chat row is inserted after the room in the same transaction: only a room that won
  // the find-or-create race gets a chat.
  yield* sql`
    CREATE TABLE rooms (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
      blueprint_id uuid REFERENCES room_blueprints (id) ON DELETE SET NULL,
      external_ref text NOT NULL,
      title text,
      lifecycle text NOT NULL CHECK (lifecycle IN ('ephemeral', 'persistent')),
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
      chat_id uuid NOT NULL UNIQUE REFERENCES chats (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
      minutes jsonb,
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      closed_at timestamptz,
      closed_by uuid REFERENCES users (id) ON DELETE SET NULL,
      -- An agent that asked a person a question (a parameter, a confirmation): their next message answers it.
      awaiting_agent_id uuid REFERENCES agents (id) ON DELETE SET NULL,
      awaiting_user_id uuid REFERENCES users (id) ON DELETE SET NULL
    )`
  // Find-or-create is decided by these two indexes, not by a read: one open room per ref, and a
  // persistent room is the only room its ref ever has.
  yield* sql`CREATE UNIQUE INDEX rooms_open_ref_key ON rooms (tenant_id, external_ref) WHERE status = 'open'`
  yield* sql`CREATE UNIQUE INDEX rooms_persistent_ref_key ON rooms (tenant_id, external_ref) WHERE lifecycle = 'persistent'`
  yield* sql`CREATE INDEX rooms_ref_idx ON rooms (tenant_id, external_ref)`
  yield* sql`CREATE INDEX rooms_tenant_idx ON rooms (tenant_id, seq)`

  yield* sql`
    CREATE TABLE room_participants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      -- Orders participants as they joined (several join in one transaction, at one now()).
      seq bigint GENERATED ALWAYS AS IDENTITY,
      room_id uuid NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      user_id uuid REFERENCES users (id) ON DELETE CASCADE,
      agent_id uuid REFERENCES agents (id) ON DELETE CASCADE,
      always_on boolean NOT NULL DEFAULT false,
      joined_at timestamptz NOT NULL DEFAULT now(),
      added_by uuid REFERENCES users (id) ON DELETE SET NULL,
      -- Presence: seen last at, and online until (a poll or an open WebSocket pushes it forward).
      last_seen_at timestamptz,
      online_until timestamptz,
      CHECK ((user_id IS NULL) <> (agent_id IS NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX room_participants_user_key ON room_participants (room_id, user_id) WHERE user_id IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX room_participants_agent_key ON room_participants (room_id, agent_id) WHERE agent_id IS NOT NULL`
  yield* sql`CREATE INDEX room_participants_user_idx ON room_participants (user_id) WHERE user_id IS NOT NULL`

  yield* sql`
    CREATE TABLE notifications (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('room_invitation')),
      title text NOT NULL,
      body text NOT NULL,
      link text NOT NULL,
      room_id uuid REFERENCES rooms (id) ON DELETE SET NULL,
      read_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX notifications_user_idx ON notifications (user_id, seq)`
  yield* sql`CREATE INDEX notifications_unread_idx ON notifications (user_id) WHERE read_at IS NULL`

  // An endpoint is one browser's registration: it belongs to one user at a time.
  yield* sql`
    CREATE TABLE push_subscriptions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      endpoint text NOT NULL UNIQUE,
      p256dh text NOT NULL,
      auth text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX push_subscriptions_user_idx ON push_subscriptions (user_id)`

  yield* sql`
    CREATE TABLE push_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      subscription_id uuid REFERENCES push_subscriptions (id) ON DELETE SET NULL,
      notification_id uuid REFERENCES notifications (id) ON DELETE SET NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'sending', 'delivered', 'gone', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    )`
  yield* sql`CREATE INDEX push_deliveries_due_idx ON push_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX push_deliveries_leased_idx ON push_deliveries (locked_until) WHERE status = 'sending'`
})
