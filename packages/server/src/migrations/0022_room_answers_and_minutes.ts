/**
 * Two room guarantees.
 *
 * Who a pending action asks: `chat_pending_actions` records the person (a
 * signed-in user) or the API key the agent put its question to; only they
 * answer it (Chat/ChatTurn.ts). A room's question already waiting goes to
 * the person the room records as awaited; other rows stored before this
 * column name nobody and keep the old rule: the turn's caller answers (a
 * classic chat has one speaker anyway, and a pending action lapses after 30
 * minutes).
 *
 * When a closed room's minutes are due: `rooms.minutes_due_at` is set by the
 * close, cleared when the minutes are stored, and a job process takes any
 * room past it to write them (Rooms/RoomMinutes.ts), so a close cut short
 * after its commit still ends with minutes. Rooms already closed without
 * minutes are due now.
 *
 * Idempotent (the tests run it again on a migrated database).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE chat_pending_actions
      ADD COLUMN IF NOT EXISTS asked_user_id uuid,
      ADD COLUMN IF NOT EXISTS asked_key_id uuid`
  yield* sql`
    UPDATE chat_pending_actions p SET asked_user_id = r.awaiting_user_id
    FROM rooms r
    WHERE r.chat_id = p.chat_id AND r.awaiting_agent_id = p.agent_id AND r.awaiting_user_id IS NOT NULL
      AND p.asked_user_id IS NULL AND p.asked_key_id IS NULL`
  yield* sql`ALTER TABLE rooms ADD COLUMN IF NOT EXISTS minutes_due_at timestamptz`
  yield* sql`
    UPDATE rooms SET minutes_due_at = now()
    WHERE status = 'closed' AND minutes IS NULL AND minutes_due_at IS NULL`
  // The recovery's queue: only rooms whose minutes are owed are indexed.
  yield* sql`
    CREATE INDEX IF NOT EXISTS rooms_minutes_due_idx ON rooms (minutes_due_at) WHERE minutes_due_at IS NOT NULL`
})
