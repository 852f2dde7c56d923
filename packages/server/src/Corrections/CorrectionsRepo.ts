/**
 * The SQL of decision records (`corrections`) and the chat messages they
 * correct. Every query filters by the caller's tenant, and every query that
 * reads or files a record by the chats the caller may read (`readableBy`).
 */
import type { Corrections } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { takesPartSql } from "../Rooms/RoomsRepo.ts"

export interface CorrectionRow {
  readonly id: string
  readonly chat_id: string
  readonly message_id: string
  readonly agent_id: string
  readonly question: string | null
  readonly original_output: string
  readonly corrected_output: string
  readonly reason: string | null
  readonly status: Corrections.CorrectionStatus
  readonly created_by: string | null
  readonly created_at: Date
  readonly resolved_by: string | null
  readonly resolved_at: Date | null
  readonly knowledge_file_id: string | null
}

/** A stored chat message, and the user message just before it (the question it answered). */
export interface CorrectedMessage {
  readonly id: string
  readonly role: "user" | "agent"
  readonly content: string
  readonly agent_id: string | null
  readonly question: string | null
}

const columns =
  "id, chat_id, message_id, agent_id, question, original_output, corrected_output, reason, status, created_by, created_at, resolved_by, resolved_at, knowledge_file_id"

export class CorrectionsRepo extends Context.Service<CorrectionsRepo, {
  /** Whether the tenant has the chat and `readerId` may read it. */
  readonly chatReadable: (tenantId: string, chatId: string, readerId: string) => Effect.Effect<boolean, SqlError>
  readonly agentExists: (tenantId: string, agentId: string) => Effect.Effect<boolean, SqlError>
  readonly findMessage: (
    tenantId: string,
    chatId: string,
    messageId: string
  ) => Effect.Effect<CorrectedMessage | undefined, SqlError>
  readonly insert: (record: {
    readonly tenantId: string
    readonly chatId: string
    readonly messageId: string
    readonly agentId: string
    readonly question: string | null
    readonly originalOutput: string
    readonly correctedOutput: string
    readonly reason: string | null
    readonly createdBy: string
  }) => Effect.Effect<CorrectionRow, SqlError>
  /** The agent's records on chats `readerId` may read. */
  readonly listForAgent: (
    tenantId: string,
    agentId: string,
    status: Corrections.CorrectionStatus | undefined,
    readerId: string
  ) => Effect.Effect<ReadonlyArray<CorrectionRow>, SqlError>
  /** The record, if its chat is one `readerId` may read. */
  readonly find: (tenantId: string, id: string, readerId: string) => Effect.Effect<CorrectionRow | undefined, SqlError>
  /** Moves an open record on a chat `resolvedBy` may read to `status`; undefined when it is not open (or not there). */
  readonly resolveOpen: (
    tenantId: string,
    id: string,
    status: "accepted" | "rejected",
    resolvedBy: string
  ) => Effect.Effect<CorrectionRow | undefined, SqlError>
  readonly setKnowledgeFile: (tenantId: string, id: string, fileId: string) => Effect.Effect<CorrectionRow, SqlError>
}>()("@agent-platform/server/Corrections/CorrectionsRepo") {
  static readonly layer = Layer.effect(
    CorrectionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const selected = sql.literal(columns)
      const first = <A>(rows: ReadonlyArray<A>) => rows[0]
      /**
       * Who reads a chat, as the chat endpoints decide it: a room's chat only
       * its participants (administrators included only once they take part:
       * Rooms/RoomChat.ts answers them 403 too); a classic chat anyone of the
       * tenant (GET /v1/chat/history). `chat` is the column of the chat id.
       */
      const readableBy = (readerId: string, chat: string) =>
        sql`NOT EXISTS (
          SELECT 1 FROM rooms r WHERE r.chat_id = ${sql.literal(chat)} AND NOT ${takesPartSql(sql, sql`r.id`, readerId)}
        )`
      return CorrectionsRepo.of({
        chatReadable: (tenantId, chatId, readerId) =>
          Effect.map(
            sql`SELECT 1 FROM chats WHERE tenant_id = ${tenantId} AND id = ${chatId} AND ${
              readableBy(readerId, "chats.id")
            }`,
            (rows) => rows.length > 0
          ),
        agentExists: (tenantId, agentId) =>
          Effect.map(
            sql`SELECT 1 FROM agents WHERE tenant_id = ${tenantId} AND id = ${agentId}`,
            (rows) => rows.length > 0
          ),
        findMessage: (tenantId, chatId, messageId) =>
          Effect.map(
            sql<CorrectedMessage>`
              SELECT m.id, m.role, m.content, m.agent_id,
                (SELECT q.content FROM chat_messages q
                 WHERE q.chat_id = m.chat_id AND q.tenant_id = m.tenant_id AND q.role = 'user' AND q.seq < m.seq
                 ORDER BY q.seq DESC LIMIT 1) AS question
              FROM chat_messages m
              WHERE m.tenant_id = ${tenantId} AND m.chat_id = ${chatId} AND m.id = ${messageId}`,
            first
          ),
        insert: (r) =>
          Effect.map(
            sql<CorrectionRow>`
              INSERT INTO corrections (tenant_id, chat_id, message_id, agent_id, question, original_output, corrected_output, reason, created_by)
              VALUES (${r.tenantId}, ${r.chatId}, ${r.messageId}, ${r.agentId}, ${r.question}, ${r.originalOutput},
                      ${r.correctedOutput}, ${r.reason}, ${r.createdBy})
              RETURNING ${selected}`,
            (rows) => rows[0]
          ),
        listForAgent: (tenantId, agentId, status, readerId) =>
          sql<CorrectionRow>`
            SELECT ${selected} FROM corrections
            WHERE tenant_id = ${tenantId} AND agent_id = ${agentId} AND ${
            readableBy(readerId, "corrections.chat_id")
          } ${status === undefined ? sql`` : sql`AND status = ${status}`}
            ORDER BY created_at DESC, id`,
        find: (tenantId, id, readerId) =>
          Effect.map(
            sql<CorrectionRow>`
              SELECT ${selected} FROM corrections
              WHERE tenant_id = ${tenantId} AND id = ${id} AND ${readableBy(readerId, "corrections.chat_id")}`,
            first
          ),
        resolveOpen: (tenantId, id, status, resolvedBy) =>
          Effect.map(
            sql<CorrectionRow>`
              UPDATE corrections SET status = ${status}, resolved_by = ${resolvedBy}, resolved_at = now()
              WHERE tenant_id = ${tenantId} AND id = ${id} AND status = 'open'
                AND ${readableBy(resolvedBy, "corrections.chat_id")}
              RETURNING ${selected}`,
            first
          ),
        setKnowledgeFile: (tenantId, id, fileId) =>
          Effect.map(
            sql<CorrectionRow>`
              UPDATE corrections SET knowledge_file_id = ${fileId} WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING ${selected}`,
            (rows) => rows[0]
          )
      })
    })
  )
}
