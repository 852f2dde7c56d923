/**
 * The chats, chat_messages and chat_pending_actions tables, and the spaces and
 * agents a chat reads. Every query filters by the caller's `tenant_id`.
 */
import { Context, Effect, Exit, Layer, Request } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { groupCommit, groupCommitEach } from "../Platform/GroupCommit.ts"
import { selectSpaceByRef, type SpaceRow } from "../Tenants/SpaceRefs.ts"

export type { SpaceRow }

export interface AgentRow {
  readonly id: string
  readonly space_id: string
  readonly name: string
  readonly summary: string
  readonly instructions: string | null
  readonly is_primary: boolean
  readonly always_on: boolean
}

export interface SeedMessage {
  readonly role: "user" | "agent"
  readonly content: string
}

export interface ChatRow {
  readonly id: string
  readonly tenant_id: string
  readonly space_id: string
  readonly agent_id: string | null
  readonly seed_history: ReadonlyArray<SeedMessage>
  /** A work room's chat: people write to it through the room (`/api/chats/{id}/messages/append`). */
  readonly room_mode?: boolean | undefined
}

export interface MessageRow {
  readonly id: string
  readonly role: "user" | "agent"
  readonly content: string
  readonly agent_id: string | null
  readonly seq: number
  readonly created_at: Date
}

/** The action a chat is preparing (slot filling), or waiting to have confirmed. */
export interface PendingActionRow {
  readonly chat_id: string
  readonly agent_id: string
  readonly action_id: string
  readonly stage: "collecting" | "confirming"
  readonly params: Record<string, unknown>
  /** The parameter asked for last (collecting). */
  readonly asking: string | null
  /**
   * Who the agent asked — a signed-in user or an API key —, the only one
   * whose message answers it (SlotFilling `answers`). Both null on rows
   * stored before migration 0022: the turn's caller answers them.
   */
  readonly asked_user_id: string | null
  readonly asked_key_id: string | null
}

/** A new chat with its first message (the user's, `seq` 1), stored together. */
export interface NewChat {
  /** Chosen by the caller, so the chat can be announced before it is stored. */
  readonly id: string
  readonly tenantId: string
  readonly spaceId: string
  readonly agentId: string
  readonly keyId: string | null
  readonly userId: string | null
  readonly seedHistory: ReadonlyArray<SeedMessage>
  readonly message: string
}

/** Statements batched by group commit take at most this many requests each. */
const maxBatch = 256

interface ListAgents extends Request.Request<ReadonlyArray<AgentRow>, SqlError> {
  readonly tenantId: string
  readonly spaceId: string
}
const ListAgents = Request.of<ListAgents>()

interface StartChat extends Request.Request<void, SqlError> {
  readonly chat: NewChat
}
const StartChat = Request.of<StartChat>()

/** An action left half-prepared this long is forgotten: the next message starts afresh. */
export const pendingActionLifetimeMinutes = 30

export class ChatRepo extends Context.Service<ChatRepo, {
  /** A space of the tenant by id or by code. */
  readonly findSpace: (tenantId: string, ref: string) => Effect.Effect<SpaceRow | undefined, SqlError>
  /** The tenant's first space (oldest). */
  readonly firstSpace: (tenantId: string) => Effect.Effect<SpaceRow | undefined, SqlError>
  /** The space's agents, oldest first; concurrent calls share a statement (group commit). */
  readonly listAgents: (tenantId: string, spaceId: string) => Effect.Effect<ReadonlyArray<AgentRow>, SqlError>
  /**
   * Stores a new chat and its first message; concurrent calls share one
   * statement (group commit), and a batch that fails is retried chat by chat
   * so that one chat's failure stays its own.
   */
  readonly startChat: (chat: NewChat) => Effect.Effect<void, SqlError>
  readonly findChat: (tenantId: string, chatId: string) => Effect.Effect<ChatRow | undefined, SqlError>
  readonly setChatAgent: (tenantId: string, chatId: string, agentId: string) => Effect.Effect<void, SqlError>
  /** Appends a message with the chat's next `seq`. */
  readonly appendMessage: (message: {
    readonly tenantId: string
    readonly chatId: string
    readonly role: "user" | "agent"
    readonly content: string
    readonly agentId: string | null
    /** The signed-in author of a user message (rooms show it); omitted for API keys and agents. */
    readonly userId?: string | null | undefined
    readonly tokensInput: number
    readonly tokensOutput: number
  }) => Effect.Effect<MessageRow, SqlError>
  /** The chat's messages before `beforeSeq`, the last `limit` of them, in order. */
  readonly recentMessages: (
    tenantId: string,
    chatId: string,
    beforeSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<MessageRow>, SqlError>
  /** All the chat's messages in order. */
  readonly messages: (tenantId: string, chatId: string) => Effect.Effect<ReadonlyArray<MessageRow>, SqlError>
  /** The action the chat is preparing, unless it was left alone for `pendingActionLifetimeMinutes`. */
  readonly pendingAction: (tenantId: string, chatId: string) => Effect.Effect<PendingActionRow | undefined, SqlError>
  readonly savePendingAction: (tenantId: string, pending: PendingActionRow) => Effect.Effect<void, SqlError>
  readonly clearPendingAction: (tenantId: string, chatId: string) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Chat/ChatRepo") {
  static readonly layer = Layer.effect(
    ChatRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const first = <A>(rows: ReadonlyArray<A>) => rows[0]
      const chatColumns = sql.literal("id, tenant_id, space_id, agent_id, seed_history")
      const messageColumns = sql.literal("id, role, content, agent_id, seq, created_at")

      const agentsResolver = groupCommit<ListAgents>({
        maxBatch,
        runAll: (entries) =>
          Effect.gen(function*() {
            const spaces = new Map(entries.map(({ request }) => [request.spaceId, request.tenantId]))
            const rows = yield* sql<AgentRow & { readonly tenant_id: string }>`
              SELECT tenant_id, id, space_id, name, summary, instructions, is_primary, always_on FROM agents
              WHERE ${
              sql.or([...spaces].map(([spaceId, tenantId]) => sql`(tenant_id = ${tenantId} AND space_id = ${spaceId})`))
            }
              ORDER BY created_at, id`
            for (const entry of entries) {
              const { spaceId, tenantId } = entry.request
              entry.completeUnsafe(Exit.succeed(
                rows.filter((row) => row.space_id === spaceId && row.tenant_id === tenantId).map((
                  { tenant_id: _, ...agent }
                ) => agent)
              ))
            }
          })
      })

      /** One statement for the chats and their first messages. */
      const insertChats = (chats: ReadonlyArray<NewChat>) =>
        sql`
          WITH created AS (
            INSERT INTO chats (id, tenant_id, space_id, agent_id, key_id, user_id, seed_history, last_seq)
            VALUES ${
          sql.csv(chats.map((chat) =>
            sql`(${chat.id}::uuid, ${chat.tenantId}::uuid, ${chat.spaceId}::uuid, ${chat.agentId}::uuid,
                 ${chat.keyId}::uuid, ${chat.userId}::uuid, ${JSON.stringify(chat.seedHistory)}::jsonb, 1)`
          ))
        }
            RETURNING id
          )
          INSERT INTO chat_messages (chat_id, tenant_id, role, content, agent_id, user_id, seq)
          VALUES ${
          sql.csv(
            chats.map((chat) =>
              sql`(${chat.id}::uuid, ${chat.tenantId}::uuid, 'user', ${chat.message}, NULL, ${chat.userId}::uuid, 1)`
            )
          )
        }`

      const chatsResolver = groupCommitEach<StartChat>({
        maxBatch,
        run: (requests) =>
          Effect.as(insertChats(requests.map((request) => request.chat)), requests.map((): void => undefined))
      })

      return ChatRepo.of({
        findSpace: (tenantId, ref) => Effect.map(selectSpaceByRef(sql, tenantId, ref), first),
        firstSpace: (tenantId) =>
          Effect.map(
            sql<SpaceRow>`SELECT id, code FROM spaces WHERE tenant_id = ${tenantId} ORDER BY created_at, id LIMIT 1`,
            first
          ),
        listAgents: (tenantId, spaceId) => Effect.request(ListAgents({ tenantId, spaceId }), agentsResolver),
        startChat: (chat) => Effect.request(StartChat({ chat }), chatsResolver),
        findChat: (tenantId, chatId) =>
          Effect.map(
            sql<ChatRow>`
              SELECT ${chatColumns}, EXISTS (SELECT 1 FROM rooms r WHERE r.chat_id = chats.id) AS room_mode
              FROM chats WHERE tenant_id = ${tenantId} AND id = ${chatId}`,
            first
          ),
        setChatAgent: (tenantId, chatId, agentId) =>
          Effect.asVoid(
            sql`UPDATE chats SET agent_id = ${agentId}, updated_at = now() WHERE tenant_id = ${tenantId} AND id = ${chatId}`
          ),
        appendMessage: (message) =>
          Effect.map(
            sql<MessageRow>`
              WITH next AS (
                UPDATE chats SET last_seq = last_seq + 1, updated_at = now()
                WHERE tenant_id = ${message.tenantId} AND id = ${message.chatId}
                RETURNING last_seq
              )
              INSERT INTO chat_messages (chat_id, tenant_id, role, content, agent_id, user_id, seq, tokens_input, tokens_output)
              SELECT ${message.chatId}, ${message.tenantId}, ${message.role}, ${message.content}, ${
              // An agent deleted while it answered: its message is kept, without the agent, as the deletion
              // leaves its earlier ones (ON DELETE SET NULL), not lost to a foreign key violation.
              message.agentId === null
                ? null
                : sql`(SELECT a.id FROM agents a WHERE a.id = ${message.agentId} FOR KEY SHARE)`},
                     ${message.userId ?? null}, next.last_seq, ${message.tokensInput}, ${message.tokensOutput}
              FROM next
              RETURNING ${messageColumns}`,
            (rows) => rows[0]
          ),
        recentMessages: (tenantId, chatId, beforeSeq, limit) =>
          Effect.map(
            sql<MessageRow>`
              SELECT ${messageColumns} FROM chat_messages
              WHERE tenant_id = ${tenantId} AND chat_id = ${chatId} AND seq < ${beforeSeq}
              ORDER BY seq DESC LIMIT ${limit}`,
            (rows) => [...rows].reverse()
          ),
        messages: (tenantId, chatId) =>
          sql<MessageRow>`
            SELECT ${messageColumns} FROM chat_messages
            WHERE tenant_id = ${tenantId} AND chat_id = ${chatId} ORDER BY seq`,
        pendingAction: (tenantId, chatId) =>
          Effect.map(
            sql<PendingActionRow>`
              SELECT chat_id, agent_id, action_id, stage, params, asking, asked_user_id, asked_key_id
              FROM chat_pending_actions
              WHERE tenant_id = ${tenantId} AND chat_id = ${chatId}
                AND updated_at > now() - ${pendingActionLifetimeMinutes}::int * interval '1 minute'`,
            first
          ),
        savePendingAction: (tenantId, pending) =>
          Effect.asVoid(sql`
            INSERT INTO chat_pending_actions
              (chat_id, tenant_id, agent_id, action_id, stage, params, asking, asked_user_id, asked_key_id)
            VALUES (${pending.chat_id}, ${tenantId}, ${pending.agent_id}, ${pending.action_id}, ${pending.stage},
                    ${JSON.stringify(pending.params)}::jsonb, ${pending.asking},
                    ${pending.asked_user_id}::uuid, ${pending.asked_key_id}::uuid)
            ON CONFLICT (chat_id) DO UPDATE SET
              agent_id = EXCLUDED.agent_id, action_id = EXCLUDED.action_id, stage = EXCLUDED.stage,
              params = EXCLUDED.params, asking = EXCLUDED.asking, asked_user_id = EXCLUDED.asked_user_id,
              asked_key_id = EXCLUDED.asked_key_id, updated_at = now()`),
        clearPendingAction: (tenantId, chatId) =>
          Effect.asVoid(sql`DELETE FROM chat_pending_actions WHERE tenant_id = ${tenantId} AND chat_id = ${chatId}`)
      })
    })
  )
}
