/**
 * The rooms, room_participants tables and what a room reads of its chat
 * (chats, chat_messages): the SQL of work rooms. Every query filters by the
 * tenant taken from the caller's principal.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import type { AgentRow } from "../Chat/ChatRepo.ts"

/**
 * The rule every read of a room follows — the room, its chat, the corrections
 * of its chat: a person reads it when listed among its participants
 * (administrators too, once they join). `room` is the SQL of the room's id.
 */
export const takesPartSql = (sql: SqlClient.SqlClient, room: Statement.Fragment, userId: string) =>
  sql`EXISTS (SELECT 1 FROM room_participants p WHERE p.room_id = ${room} AND p.user_id = ${userId})`

export interface RoomRow {
  readonly id: string
  readonly seq: string | number
  readonly tenant_id: string
  readonly space_id: string
  readonly blueprint_id: string | null
  readonly external_ref: string
  readonly title: string | null
  readonly lifecycle: "ephemeral" | "persistent"
  readonly status: "open" | "closed"
  readonly chat_id: string
  readonly minutes: unknown
  readonly created_at: Date
  readonly closed_at: Date | null
  readonly closed_by: string | null
  /** Set by a close until its minutes are stored: a close's minutes still to come. */
  readonly minutes_due_at: Date | null
  /** The chat's last message number when the room's current period began (its creation or last reopen). */
  readonly period_after_seq: string | number
  /** The agent waiting for a person's answer (a parameter or a confirmation), and that person. */
  readonly awaiting_agent_id: string | null
  readonly awaiting_user_id: string | null
}

export interface ParticipantRow {
  readonly room_id: string
  readonly user_id: string | null
  readonly agent_id: string | null
  /** The person's display name, or the agent's name. */
  readonly name: string
  readonly always_on: boolean
  readonly joined_at: Date
}

/** An agent taking part, as the chat engine and the minutes need it (`always_on` is the room's setting). */
export interface RoomAgentRow extends AgentRow {
  readonly minutes_role: "summary" | "decisions" | null
}

export interface MessageRow {
  readonly id: string
  readonly seq: number
  readonly role: "user" | "agent"
  readonly user_id: string | null
  readonly agent_id: string | null
  readonly author_name: string | null
  readonly content: string
  readonly created_at: Date
}

export interface PresenceRow {
  readonly user_id: string
  readonly nombre: string
  readonly last_seen_at: Date
  readonly online: boolean
}

export interface InvitableRow {
  readonly id: string
  readonly nombre: string
  readonly email: string
  readonly avatar_url: string | null
}

export interface NewRoom {
  readonly tenantId: string
  readonly spaceId: string
  readonly blueprintId: string | null
  readonly externalRef: string
  readonly title: string | null
  readonly lifecycle: "ephemeral" | "persistent"
  readonly createdBy: string
}

export interface ListFilter {
  readonly tenantId: string
  /** Only rooms this user takes part in; undefined: every room (administrators). */
  readonly participant?: string | undefined
  readonly blueprintId?: string | undefined
  readonly status?: "open" | "closed" | undefined
  /** Rooms older than this position (the cursor). */
  readonly beforeSeq?: number | undefined
  readonly limit: number
}

/** `%`, `_` and `\` match themselves in a LIKE pattern. */
export const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (char) => `\\${char}`)

export class RoomsRepo extends Context.Service<RoomsRepo, {
  readonly find: (tenantId: string, id: string) => Effect.Effect<RoomRow | undefined, SqlError>
  /**
   * The room's status as its frames show it: `closed` once its close is complete — the minutes stored, in the
   * transaction that appends them — so the frame announcing the close is one that can carry them; while the
   * minutes are being written the room shows `open` (appends are already refused). Undefined once deleted.
   */
  readonly frameStatus: (roomId: string) => Effect.Effect<"open" | "closed" | undefined, SqlError>
  readonly findByChat: (tenantId: string, chatId: string) => Effect.Effect<RoomRow | undefined, SqlError>
  /** Whether the tenant has a chat with this id (to tell a classic chat from an unknown one). */
  readonly chatExists: (tenantId: string, chatId: string) => Effect.Effect<boolean, SqlError>
  /** The ref's open room, else its persistent (closed) room. */
  readonly findLiveByRef: (tenantId: string, ref: string) => Effect.Effect<RoomRow | undefined, SqlError>
  /**
   * Inserts the room and its chat; undefined when a unique index refuses it
   * (the ref has an open room, or a persistent one). Run in a transaction.
   */
  readonly insert: (room: NewRoom) => Effect.Effect<RoomRow | undefined, SqlError>
  /** Reopens a closed persistent room whose minutes are in; undefined when it was not closed, or its minutes are still due. */
  readonly reopen: (tenantId: string, id: string) => Effect.Effect<RoomRow | undefined, SqlError>
  /**
   * Closes an open room, its minutes due in `minutesDueSeconds`; undefined
   * when it was not open.
   */
  readonly close: (
    tenantId: string,
    id: string,
    userId: string,
    minutesDueSeconds: number
  ) => Effect.Effect<RoomRow | undefined, SqlError>
  /** Records which agent waits for which person's answer, or nobody (nulls). */
  readonly setAwaiting: (roomId: string, agentId: string | null, userId: string | null) => Effect.Effect<void, SqlError>
  /**
   * Stores the minutes of a closed room that has none, and marks them no
   * longer due; undefined when it has them already, or is open again.
   */
  readonly saveMinutes: (tenantId: string, id: string, minutes: unknown) => Effect.Effect<RoomRow | undefined, SqlError>
  /**
   * Takes up to `limit` closed rooms whose minutes are past due, of every
   * tenant (the jobs role's recovery), and makes them due again in
   * `leaseSeconds`: rooms another process is taking are skipped.
   */
  readonly claimDueMinutes: (
    limit: number,
    leaseSeconds: number
  ) => Effect.Effect<ReadonlyArray<RoomRow>, SqlError>
  readonly list: (filter: ListFilter) => Effect.Effect<ReadonlyArray<RoomRow>, SqlError>
  readonly participants: (roomIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ParticipantRow>, SqlError>
  readonly isParticipant: (roomId: string, userId: string) => Effect.Effect<boolean, SqlError>
  /** Adds a person; `added` false when they already took part. */
  /**
   * Whether the room is open, share-locking its row until the transaction
   * ends: a close waits for what the transaction adds, or the caller sees it
   * closed (as appends do).
   */
  readonly lockOpen: (tenantId: string, roomId: string) => Effect.Effect<boolean, SqlError>
  readonly addUser: (input: {
    readonly tenantId: string
    readonly roomId: string
    readonly userId: string
    readonly addedBy: string
  }) => Effect.Effect<{ readonly added: boolean; readonly participant: ParticipantRow }, SqlError>
  /** Adds an agent; `added` false when it already took part. */
  readonly addAgent: (input: {
    readonly tenantId: string
    readonly roomId: string
    readonly agentId: string
    readonly alwaysOn: boolean
    readonly addedBy: string
  }) => Effect.Effect<{ readonly added: boolean; readonly participant: ParticipantRow }, SqlError>
  /** The tenant's agents among `ids`, with their space. */
  readonly agentsById: (
    tenantId: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly space_id: string }>, SqlError>
  readonly agents: (roomId: string) => Effect.Effect<ReadonlyArray<RoomAgentRow>, SqlError>
  /**
   * Appends a person's message with the chat's next `seq` while the room is
   * open; undefined when it is not (a close racing the append wins or waits).
   */
  readonly appendHumanMessage: (input: {
    readonly tenantId: string
    readonly chatId: string
    readonly userId: string
    readonly content: string
  }) => Effect.Effect<MessageRow | undefined, SqlError>
  /** Messages after `afterSeq`, oldest first, at most `limit`. */
  readonly messagesAfter: (
    chatId: string,
    afterSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<MessageRow>, SqlError>
  /** The chat's last `limit` messages after message `afterSeq`, oldest first. */
  readonly lastMessages: (
    chatId: string,
    afterSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<MessageRow>, SqlError>
  readonly lastSeq: (chatId: string) => Effect.Effect<number, SqlError>
  /** The people seen in the room, by name. */
  readonly presence: (roomId: string) => Effect.Effect<ReadonlyArray<PresenceRow>, SqlError>
  /** Marks a participant seen and online for `seconds`; true when they were not online before. */
  readonly touchPresence: (roomId: string, userId: string, seconds: number) => Effect.Effect<boolean, SqlError>
  /** Marks a participant away now (their WebSocket closed). */
  readonly leavePresence: (roomId: string, userId: string) => Effect.Effect<void, SqlError>
  /** The tenant's people who can sign in (active, not blocked; no service accounts) and do not take part yet. */
  readonly invitableUsers: (
    tenantId: string,
    roomId: string,
    query: string | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<InvitableRow>, SqlError>
  /** Whether a session is still usable (not revoked or expired, its user active and not blocked). */
  readonly sessionAlive: (sessionId: string) => Effect.Effect<boolean, SqlError>
}>()("@agent-platform/server/Rooms/RoomsRepo") {
  static readonly layer = Layer.effect(
    RoomsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const first = <A>(rows: ReadonlyArray<A>) => rows[0]
      const roomColumnNames = [
        "id",
        "seq",
        "tenant_id",
        "space_id",
        "blueprint_id",
        "external_ref",
        "title",
        "lifecycle",
        "status",
        "chat_id",
        "minutes",
        "created_at",
        "closed_at",
        "closed_by",
        "minutes_due_at",
        "period_after_seq",
        "awaiting_agent_id",
        "awaiting_user_id"
      ] satisfies ReadonlyArray<keyof RoomRow>
      const roomColumns = sql.literal(roomColumnNames.join(", "))
      const roomColumnsOfR = sql.literal(roomColumnNames.map((name) => `r.${name}`).join(", "))
      const messageSelect = sql.literal(`
        SELECT m.id, m.seq, m.role, m.user_id, m.agent_id, COALESCE(u.nombre, a.name) AS author_name, m.content, m.created_at
        FROM chat_messages m
        LEFT JOIN users u ON u.id = m.user_id
        LEFT JOIN agents a ON a.id = m.agent_id`)
      const participantSelect = sql.literal(`
        SELECT p.room_id, p.user_id, p.agent_id, COALESCE(u.nombre, a.name) AS name, p.always_on, p.joined_at
        FROM room_participants p
        LEFT JOIN users u ON u.id = p.user_id
        LEFT JOIN agents a ON a.id = p.agent_id`)

      const participantOf = (roomId: string, column: "user_id" | "agent_id", id: string) =>
        Effect.map(
          column === "user_id"
            ? sql<ParticipantRow>`${participantSelect} WHERE p.room_id = ${roomId} AND p.user_id = ${id}`
            : sql<ParticipantRow>`${participantSelect} WHERE p.room_id = ${roomId} AND p.agent_id = ${id}`,
          (rows) => rows[0]
        )

      return RoomsRepo.of({
        find: (tenantId, id) =>
          Effect.map(
            sql<RoomRow>`SELECT ${roomColumns} FROM rooms WHERE tenant_id = ${tenantId} AND id = ${id}`,
            first
          ),
        frameStatus: (roomId) =>
          Effect.map(
            sql<{ status: "open" | "closed" }>`
              SELECT CASE WHEN status = 'closed' AND minutes IS NOT NULL THEN 'closed' ELSE 'open' END AS status
              FROM rooms WHERE id = ${roomId}`,
            (rows) => rows[0]?.status
          ),
        findByChat: (tenantId, chatId) =>
          Effect.map(
            sql<RoomRow>`SELECT ${roomColumns} FROM rooms WHERE tenant_id = ${tenantId} AND chat_id = ${chatId}`,
            first
          ),
        chatExists: (tenantId, chatId) =>
          Effect.map(
            sql`SELECT 1 FROM chats WHERE tenant_id = ${tenantId} AND id = ${chatId}`,
            (rows) => rows.length > 0
          ),
        findLiveByRef: (tenantId, ref) =>
          Effect.map(
            sql<RoomRow>`
              SELECT ${roomColumns} FROM rooms
              WHERE tenant_id = ${tenantId} AND external_ref = ${ref} AND (status = 'open' OR lifecycle = 'persistent')
              ORDER BY status = 'open' DESC LIMIT 1`,
            first
          ),
        insert: (room) =>
          Effect.gen(function*() {
            // The chat is a room chat from its first row: the room is inserted first (its chat
            // foreign key is checked at commit), and only the room that won gets its chat.
            const chatId = crypto.randomUUID()
            const rows = yield* sql<RoomRow>`
              INSERT INTO rooms (tenant_id, space_id, blueprint_id, external_ref, title, lifecycle, chat_id, created_by)
              VALUES (${room.tenantId}, ${room.spaceId}, ${room.blueprintId}, ${room.externalRef}, ${room.title},
                      ${room.lifecycle}, ${chatId}, ${room.createdBy})
              ON CONFLICT DO NOTHING
              RETURNING ${roomColumns}`
            if (rows.length === 0) return undefined
            yield* sql`
              INSERT INTO chats (id, tenant_id, space_id, user_id)
              VALUES (${chatId}, ${room.tenantId}, ${room.spaceId}, ${room.createdBy})`
            return rows[0]
          }),
        reopen: (tenantId, id) =>
          Effect.map(
            sql<RoomRow>`
              UPDATE rooms SET status = 'open', closed_at = NULL, closed_by = NULL, minutes = NULL, minutes_due_at = NULL,
                period_after_seq = (SELECT last_seq FROM chats WHERE chats.id = rooms.chat_id)
              WHERE tenant_id = ${tenantId} AND id = ${id} AND status = 'closed'
                AND (minutes IS NOT NULL OR minutes_due_at IS NULL)
              RETURNING ${roomColumns}`,
            first
          ),
        close: (tenantId, id, userId, minutesDueSeconds) =>
          Effect.map(
            sql<RoomRow>`
              UPDATE rooms SET status = 'closed', closed_at = now(), closed_by = ${userId},
                minutes_due_at = now() + ${minutesDueSeconds}::int * interval '1 second'
              WHERE tenant_id = ${tenantId} AND id = ${id} AND status = 'open'
              RETURNING ${roomColumns}`,
            first
          ),
        setAwaiting: (roomId, agentId, userId) =>
          Effect.asVoid(
            sql`UPDATE rooms SET awaiting_agent_id = ${agentId}, awaiting_user_id = ${userId} WHERE id = ${roomId}`
          ),
        saveMinutes: (tenantId, id, minutes) =>
          Effect.map(
            sql<RoomRow>`
              UPDATE rooms SET minutes = ${JSON.stringify(minutes)}::jsonb, minutes_due_at = NULL
              WHERE tenant_id = ${tenantId} AND id = ${id} AND status = 'closed' AND minutes IS NULL
              RETURNING ${roomColumns}`,
            first
          ),
        claimDueMinutes: (limit, leaseSeconds) =>
          sql<RoomRow>`
            UPDATE rooms SET minutes_due_at = now() + ${leaseSeconds}::int * interval '1 second'
            WHERE id IN (
              SELECT id FROM rooms
              WHERE minutes_due_at <= now() AND status = 'closed' AND minutes IS NULL
              ORDER BY minutes_due_at LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            )
            RETURNING ${roomColumns}`,
        list: (filter) => {
          const conditions = [
            sql`r.tenant_id = ${filter.tenantId}`,
            ...(filter.participant === undefined
              ? []
              : [takesPartSql(sql, sql`r.id`, filter.participant)]),
            ...(filter.blueprintId === undefined ? [] : [sql`r.blueprint_id = ${filter.blueprintId}`]),
            ...(filter.status === undefined ? [] : [sql`r.status = ${filter.status}`]),
            ...(filter.beforeSeq === undefined ? [] : [sql`r.seq < ${filter.beforeSeq}`])
          ]
          return sql<RoomRow>`
            SELECT ${roomColumnsOfR} FROM rooms r WHERE ${sql.and(conditions)}
            ORDER BY r.seq DESC LIMIT ${filter.limit}`
        },
        participants: (roomIds) =>
          roomIds.length === 0
            ? Effect.succeed([])
            : sql<ParticipantRow>`
              ${participantSelect} WHERE ${sql.in("p.room_id", roomIds)}
              ORDER BY p.seq`,
        isParticipant: (roomId, userId) =>
          Effect.map(
            sql<{ takes_part: boolean }>`SELECT ${takesPartSql(sql, sql`${roomId}`, userId)} AS takes_part`,
            (rows) => rows[0]?.takes_part === true
          ),
        lockOpen: (tenantId, roomId) =>
          Effect.map(
            sql`SELECT 1 FROM rooms WHERE tenant_id = ${tenantId} AND id = ${roomId} AND status = 'open' FOR SHARE`,
            (rows) => rows.length > 0
          ),
        addUser: (input) =>
          Effect.gen(function*() {
            const inserted = yield* sql`
              INSERT INTO room_participants (room_id, tenant_id, user_id, added_by)
              VALUES (${input.roomId}, ${input.tenantId}, ${input.userId}, ${input.addedBy})
              ON CONFLICT (room_id, user_id) WHERE user_id IS NOT NULL DO NOTHING
              RETURNING id`
            const participant = yield* participantOf(input.roomId, "user_id", input.userId)
            return { added: inserted.length > 0, participant }
          }),
        addAgent: (input) =>
          Effect.gen(function*() {
            const inserted = yield* sql`
              INSERT INTO room_participants (room_id, tenant_id, agent_id, always_on, added_by)
              VALUES (${input.roomId}, ${input.tenantId}, ${input.agentId}, ${input.alwaysOn}, ${input.addedBy})
              ON CONFLICT (room_id, agent_id) WHERE agent_id IS NOT NULL DO NOTHING
              RETURNING id`
            const participant = yield* participantOf(input.roomId, "agent_id", input.agentId)
            return { added: inserted.length > 0, participant }
          }),
        agentsById: (tenantId, ids) =>
          ids.length === 0
            ? Effect.succeed([])
            : sql<{ id: string; space_id: string }>`SELECT id, space_id FROM agents WHERE tenant_id = ${tenantId} AND ${
              sql.in("id", ids)
            }`,
        agents: (roomId) =>
          sql<RoomAgentRow>`
            SELECT a.id, a.space_id, a.name, a.summary, a.instructions, a.is_primary, p.always_on, a.minutes_role
            FROM room_participants p JOIN agents a ON a.id = p.agent_id
            WHERE p.room_id = ${roomId} ORDER BY p.seq`,
        appendHumanMessage: (input) =>
          Effect.map(
            // The room's row is share-locked: a close waits for the append, or the append sees it closed.
            sql<MessageRow>`
              WITH open_room AS (
                SELECT id FROM rooms
                WHERE tenant_id = ${input.tenantId} AND chat_id = ${input.chatId} AND status = 'open'
                FOR SHARE
              ), next AS (
                UPDATE chats SET last_seq = last_seq + 1, updated_at = now()
                WHERE tenant_id = ${input.tenantId} AND id = ${input.chatId} AND EXISTS (SELECT 1 FROM open_room)
                RETURNING last_seq
              )
              INSERT INTO chat_messages (chat_id, tenant_id, role, content, user_id, seq)
              SELECT ${input.chatId}, ${input.tenantId}, 'user', ${input.content}, ${input.userId}, next.last_seq FROM next
              RETURNING id, seq, role, user_id, agent_id, NULL::text AS author_name, content, created_at`,
            first
          ),
        messagesAfter: (chatId, afterSeq, limit) =>
          sql<
            MessageRow
          >`${messageSelect} WHERE m.chat_id = ${chatId} AND m.seq > ${afterSeq} ORDER BY m.seq LIMIT ${limit}`,
        lastMessages: (chatId, afterSeq, limit) =>
          Effect.map(
            sql<MessageRow>`
              ${messageSelect} WHERE m.chat_id = ${chatId} AND m.seq > ${afterSeq} ORDER BY m.seq DESC LIMIT ${limit}`,
            (rows) => [...rows].reverse()
          ),
        lastSeq: (chatId) =>
          Effect.map(
            sql<{ last_seq: number }>`SELECT last_seq FROM chats WHERE id = ${chatId}`,
            (rows) => rows[0]?.last_seq ?? 0
          ),
        presence: (roomId) =>
          sql<PresenceRow>`
            SELECT p.user_id, u.nombre, p.last_seen_at, COALESCE(p.online_until > now(), false) AS online
            FROM room_participants p JOIN users u ON u.id = p.user_id
            WHERE p.room_id = ${roomId} AND p.last_seen_at IS NOT NULL
            ORDER BY u.nombre, p.user_id`,
        touchPresence: (roomId, userId, seconds) =>
          Effect.map(
            sql<{ was_online: boolean }>`
              UPDATE room_participants p
              SET last_seen_at = now(), online_until = now() + make_interval(secs => ${seconds})
              FROM (SELECT id, COALESCE(online_until > now(), false) AS was_online FROM room_participants
                    WHERE room_id = ${roomId} AND user_id = ${userId}) before
              WHERE p.id = before.id
              RETURNING before.was_online`,
            (rows) => rows.length > 0 && !rows[0].was_online
          ),
        leavePresence: (roomId, userId) =>
          Effect.asVoid(sql`
            UPDATE room_participants SET last_seen_at = now(), online_until = now()
            WHERE room_id = ${roomId} AND user_id = ${userId}`),
        invitableUsers: (tenantId, roomId, query, limit) => {
          const match = query === undefined || query.trim() === ""
            ? sql`TRUE`
            : sql`(u.nombre ILIKE ${`%${likeLiteral(query.trim())}%`} OR u.email ILIKE ${`%${
              likeLiteral(query.trim())
            }%`})`
          return sql<InvitableRow>`
            SELECT u.id, u.nombre, u.email, u.avatar_url FROM users u
            WHERE u.tenant_id = ${tenantId} AND u.active AND NOT u.blocked AND NOT u.is_service_account AND ${match}
              AND NOT EXISTS (SELECT 1 FROM room_participants p WHERE p.room_id = ${roomId} AND p.user_id = u.id)
            ORDER BY u.nombre, u.id LIMIT ${limit}`
        },
        sessionAlive: (sessionId) =>
          Effect.map(
            sql`
              SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
              WHERE s.id = ${sessionId} AND s.revoked_at IS NULL AND s.expires_at > now() AND u.active AND NOT u.blocked`,
            (rows) => rows.length > 0
          )
      })
    })
  )
}
