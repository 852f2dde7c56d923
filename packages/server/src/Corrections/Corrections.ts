/**
 * Decision records (flag `feature_decision_records`): a person corrects an
 * agent's message (the original output is copied from the stored message,
 * never taken from the payload); an administrator accepts or rejects the
 * correction, once. An accepted correction teaches the agent: it is added
 * to the agent's knowledge through the knowledge service's ingestion, as a
 * document whose heading is the question the message answered and whose text
 * is the corrected answer, so the same question afterwards retrieves it.
 *
 * A record copies a message, so it is shown only to those who may read the
 * chat: a room's chat is read by its participants alone (as the room's poll
 * and WebSocket decide), a classic chat by anyone of the tenant. A chat the
 * caller cannot read is 404 to correct, its records are left out of the
 * agent's list and are 404 to resolve — an administrator reviews a room's
 * corrections by taking part in the room.
 */
import { type Corrections as Domain, Errors, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLog } from "../Audit/AuditLog.ts"
import { FeatureGate } from "../Compliance/FeatureGate.ts"
import { KnowledgeFiles } from "../Knowledge/KnowledgeFiles.ts"
import { isUuid } from "../Platform/Ids.ts"
import { type CorrectionRow, CorrectionsRepo } from "./CorrectionsRepo.ts"

export const toDecisionRecord = (row: CorrectionRow): Domain.DecisionRecord => ({
  id: row.id,
  chat_id: row.chat_id,
  message_id: row.message_id,
  agent_id: row.agent_id,
  original_output: row.original_output,
  corrected_output: row.corrected_output,
  reason: row.reason,
  status: row.status,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  resolved_by: row.resolved_by,
  resolved_at: row.resolved_at?.toISOString() ?? null,
  knowledge_file_id: row.knowledge_file_id
})

/** The knowledge document of an accepted correction: the question as its heading, the corrected answer as its text. */
export const knowledgeDocument = (row: CorrectionRow) => {
  const question = (row.question ?? "").replace(/\s+/gu, " ").trim()
  return {
    filename: `correction-${row.id}.md`,
    content: `# ${question.length > 0 ? question : "Correction"}\n\n${row.corrected_output.trim()}\n`
  }
}

const notFound = (what: string) => new Errors.NotFound({ error: `${what} not found` })

export class Corrections extends Context.Service<Corrections, {
  /**
   * Succeeds when the tenant has `feature_decision_records` on; else 403
   * `FeatureDisabled` naming the flag. The HTTP API asks it first, for every
   * endpoint (the `DecisionRecordsEnabled` middleware), before the request is
   * decoded; the operations below assume it was asked.
   */
  readonly requireEnabled: (tenantId: string) => Effect.Effect<void, Errors.FeatureDisabled>
  readonly create: (
    author: UserPrincipal,
    chatId: string,
    input: typeof Domain.CreateCorrection.Type
  ) => Effect.Effect<
    typeof Domain.CorrectionCreated.Type,
    Errors.NotFound | Errors.InvalidRequest | SqlError
  >
  readonly listForAgent: (
    reader: UserPrincipal,
    agentId: string,
    status: Domain.CorrectionStatus | undefined
  ) => Effect.Effect<ReadonlyArray<Domain.DecisionRecord>, Errors.NotFound | SqlError>
  /** open → accepted | rejected, once (409 otherwise); accepting adds the correction to the agent's knowledge in the same transaction. */
  readonly resolve: (
    admin: UserPrincipal,
    id: string,
    status: "accepted" | "rejected"
  ) => Effect.Effect<Domain.DecisionRecord, Errors.NotFound | Errors.Conflict | SqlError>
}>()("@agent-platform/server/Corrections/Corrections") {
  static readonly layer = Layer.effect(
    Corrections,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* CorrectionsRepo
      const gate = yield* FeatureGate
      const knowledge = yield* KnowledgeFiles
      const audit = yield* AuditLog
      const requireEnabled = (tenantId: string) => gate.require(tenantId, "feature_decision_records")

      const create = Effect.fn("Corrections.create")(
        function*(author: UserPrincipal, chatId: string, input: typeof Domain.CreateCorrection.Type) {
          // 404, as for a chat they cannot see: a room's chat is its participants' alone.
          if (!isUuid(chatId) || !(yield* repo.chatReadable(author.tenantId, chatId, author.userId))) {
            return yield* notFound(`chat ${chatId}`)
          }
          const message = isUuid(input.message_id)
            ? yield* repo.findMessage(author.tenantId, chatId, input.message_id)
            : undefined
          if (message === undefined) return yield* notFound(`message ${input.message_id} in chat ${chatId}`)
          if (message.role !== "agent") {
            return yield* new Errors.InvalidRequest({
              error: "message_id: only an agent's message can be corrected; this one is a user's"
            })
          }
          const agentId = message.agent_id ?? input.agent_id
          if (agentId === undefined) {
            return yield* new Errors.InvalidRequest({
              error: "agent_id: the message's agent no longer exists; name the agent to teach"
            })
          }
          if (input.agent_id !== undefined && input.agent_id !== agentId) {
            return yield* new Errors.InvalidRequest({
              error: `agent_id: the message was written by agent ${agentId}, not ${input.agent_id}`
            })
          }
          if (!isUuid(agentId) || !(yield* repo.agentExists(author.tenantId, agentId))) {
            return yield* notFound(`agent ${agentId}`)
          }
          const row = yield* repo.insert({
            tenantId: author.tenantId,
            chatId,
            messageId: message.id,
            agentId,
            question: message.question,
            originalOutput: message.content,
            correctedOutput: input.corrected_output,
            reason: input.reason ?? null,
            createdBy: author.userId
          })
          return { id: row.id, status: "open" as const }
        }
      )

      const listForAgent = Effect.fn("Corrections.listForAgent")(function*(
        reader: UserPrincipal,
        agentId: string,
        status: Domain.CorrectionStatus | undefined
      ) {
        if (!isUuid(agentId) || !(yield* repo.agentExists(reader.tenantId, agentId))) {
          return yield* notFound(`agent ${agentId}`)
        }
        return (yield* repo.listForAgent(reader.tenantId, agentId, status, reader.userId)).map(toDecisionRecord)
      })

      const resolve = Effect.fn("Corrections.resolve")(
        function*(admin: UserPrincipal, id: string, status: "accepted" | "rejected") {
          if (!isUuid(id)) return yield* notFound(`correction ${id}`)
          const row = yield* Effect.gen(function*() {
            const resolved = yield* repo.resolveOpen(admin.tenantId, id, status, admin.userId)
            if (resolved === undefined) {
              const current = yield* repo.find(admin.tenantId, id, admin.userId)
              return current === undefined
                ? yield* notFound(`correction ${id}`)
                : yield* new Errors.Conflict({
                  error:
                    `correction ${id} is already ${current.status}; only an open correction can be accepted or rejected`
                })
            }
            let final = resolved
            if (status === "accepted") {
              const document = knowledgeDocument(resolved)
              const file = yield* knowledge.ingest({
                tenantId: admin.tenantId,
                agentId: resolved.agent_id,
                ...document
              }).pipe(
                // The agent exists (its corrections go with it) and the document is small: a refusal here is a defect.
                Effect.catchTag(["NotFound", "InvalidRequest"], Effect.die)
              )
              final = yield* repo.setKnowledgeFile(admin.tenantId, id, file.file_id)
            }
            yield* audit.append("admin_audit_log", {
              tenantId: admin.tenantId,
              event: `correction.${status}`,
              actor: `user:${admin.userId}`,
              target: `correction:${id}`,
              data: {
                agent_id: final.agent_id,
                message_id: final.message_id,
                knowledge_file_id: final.knowledge_file_id
              }
            })
            return final
          }).pipe(sql.withTransaction)
          return toDecisionRecord(row)
        }
      )

      return Corrections.of({ requireEnabled, create, listForAgent, resolve })
    })
  ).pipe(Layer.provide(CorrectionsRepo.layer))
}
