/**
 * The knowledge_files and knowledge_chunks tables, and the ingestion queue
 * kept in knowledge_files: `status`, `attempts`, `next_attempt_at` and the
 * lease `locked_until`. Every read of tenant data filters by `tenant_id`.
 */
import { Context, Duration, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { SearchCapabilities } from "./SearchCapabilities.ts"

export interface FileRow {
  readonly id: string
  readonly tenant_id: string
  readonly agent_id: string
  readonly filename: string
  readonly content_summary: string
  readonly status: "pending" | "processing" | "ready" | "failed"
  readonly error: string | null
  readonly size_bytes: number
  readonly chunk_count: number
  readonly attempts: number
  readonly uploaded_at: Date
  readonly processed_at: Date | null
}

/** A file taken off the queue, with its content and the attempt this is. */
export interface ClaimedFile {
  readonly id: string
  readonly tenant_id: string
  readonly agent_id: string
  readonly filename: string
  readonly content: string
  /** Why the upload cannot be processed, when ingest already knew (binary content). */
  readonly content_problem: string | null
  readonly attempts: number
}

export interface ChunkInsert {
  readonly content: string
  readonly embedding: ReadonlyArray<number>
}

const fileColumns = `id, tenant_id, agent_id, filename, content_summary, status, error, size_bytes, chunk_count, attempts,
  uploaded_at, processed_at`

/** How many chunks go into one INSERT (each carries its embedding as text). */
const insertBatch = 200

const number = (x: number) => (Number.isFinite(x) ? x.toPrecision(7) : "0")
const realArray = (vector: ReadonlyArray<number>) => `{${vector.map(number).join(",")}}`
const vectorText = (vector: ReadonlyArray<number>) => `[${vector.map(number).join(",")}]`

export class KnowledgeRepo extends Context.Service<KnowledgeRepo, {
  readonly agentExists: (tenantId: string, agentId: string) => Effect.Effect<boolean, SqlError>
  readonly insertFile: (file: {
    readonly tenantId: string
    readonly agentId: string
    readonly filename: string
    readonly content: string
    readonly contentProblem: string | null
    readonly sizeBytes: number
  }) => Effect.Effect<FileRow, SqlError>
  readonly listFiles: (tenantId: string, agentId: string | undefined) => Effect.Effect<ReadonlyArray<FileRow>, SqlError>
  readonly findFile: (tenantId: string, fileId: string) => Effect.Effect<FileRow | undefined, SqlError>
  /** Deletes a file and (by cascade) its chunks; false when it is not the tenant's. */
  readonly deleteFile: (tenantId: string, fileId: string) => Effect.Effect<boolean, SqlError>
  /**
   * Takes up to `limit` due files off the queue — pending ones whose time has
   * come and processing ones whose lease expired (a worker died) — marking
   * them processing under a lease of `lease`, with `attempts` incremented.
   */
  readonly claimDue: (limit: number, lease: Duration.Duration) => Effect.Effect<ReadonlyArray<ClaimedFile>, SqlError>
  /** Puts ready files embedded by another model back in the queue (the embedding model changed). */
  readonly requeueOtherModels: (model: string) => Effect.Effect<number, SqlError>
  /**
   * Stores a processed file's chunks and marks it ready, in one transaction;
   * false (nothing written) when this attempt lost its lease or the file was deleted.
   */
  readonly complete: (file: ClaimedFile, result: {
    readonly summary: string
    readonly model: string
    readonly chunks: ReadonlyArray<ChunkInsert>
  }) => Effect.Effect<boolean, SqlError>
  /** Back to pending after a transient failure, due again after `delay`. */
  readonly retryLater: (file: ClaimedFile, error: string, delay: Duration.Duration) => Effect.Effect<void, SqlError>
  /** Marks the file failed for good, with the reason. */
  readonly fail: (file: ClaimedFile, error: string) => Effect.Effect<void, SqlError>
}>()("@agent-platform/server/Knowledge/KnowledgeRepo") {
  static readonly layer = Layer.effect(
    KnowledgeRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const capabilities = yield* SearchCapabilities
      const columns = sql.literal(fileColumns)

      const insertChunks = (file: ClaimedFile, model: string, chunks: ReadonlyArray<ChunkInsert>, from: number) => {
        const batch = chunks.slice(from, from + insertBatch)
        const ordinals = batch.map((_, i) => from + i)
        const contents = batch.map((chunk) => chunk.content)
        const embeddings = batch.map((chunk) => realArray(chunk.embedding))
        const dims = batch[0]?.embedding.length ?? 0
        return capabilities.pgvector
          ? sql`
              INSERT INTO knowledge_chunks (file_id, tenant_id, agent_id, ordinal, content, embedding, embedding_model,
                                            embedding_dims, embedding_vector)
              SELECT ${file.id}, ${file.tenant_id}, ${file.agent_id}, c.ordinal, c.content, c.embedding::real[], ${model},
                     ${dims}, c.vector::vector
              FROM unnest(${ordinals}::int[], ${contents}::text[], ${embeddings}::text[], ${batch.map((chunk) => vectorText(chunk.embedding))}::text[])
                AS c (ordinal, content, embedding, vector)`
          : sql`
              INSERT INTO knowledge_chunks (file_id, tenant_id, agent_id, ordinal, content, embedding, embedding_model,
                                            embedding_dims)
              SELECT ${file.id}, ${file.tenant_id}, ${file.agent_id}, c.ordinal, c.content, c.embedding::real[], ${model}, ${dims}
              FROM unnest(${ordinals}::int[], ${contents}::text[], ${embeddings}::text[]) AS c (ordinal, content, embedding)`
      }

      return KnowledgeRepo.of({
        agentExists: (tenantId, agentId) =>
          Effect.map(
            sql<{ found: boolean }>`
              SELECT EXISTS (SELECT 1 FROM agents WHERE tenant_id = ${tenantId} AND id = ${agentId}) AS found`,
            (rows) => rows[0]?.found === true
          ),
        insertFile: (file) =>
          Effect.map(
            sql<FileRow>`
              INSERT INTO knowledge_files (tenant_id, agent_id, filename, content, content_problem, size_bytes)
              VALUES (${file.tenantId}, ${file.agentId}, ${file.filename}, ${file.content}, ${file.contentProblem},
                      ${file.sizeBytes})
              RETURNING ${columns}`,
            (rows) => rows[0]
          ),
        listFiles: (tenantId, agentId) =>
          agentId === undefined
            ? sql<FileRow>`SELECT ${columns} FROM knowledge_files WHERE tenant_id = ${tenantId} ORDER BY uploaded_at, id`
            : sql<FileRow>`
                SELECT ${columns} FROM knowledge_files
                WHERE tenant_id = ${tenantId} AND agent_id = ${agentId} ORDER BY uploaded_at, id`,
        findFile: (tenantId, fileId) =>
          Effect.map(
            sql<FileRow>`SELECT ${columns} FROM knowledge_files WHERE tenant_id = ${tenantId} AND id = ${fileId}`,
            (rows) => rows[0]
          ),
        deleteFile: (tenantId, fileId) =>
          Effect.map(
            sql`DELETE FROM knowledge_files WHERE tenant_id = ${tenantId} AND id = ${fileId} RETURNING id`,
            (rows) => rows.length > 0
          ),
        claimDue: (limit, lease) =>
          sql<ClaimedFile>`
            UPDATE knowledge_files AS f
            SET status = 'processing', attempts = f.attempts + 1,
                locked_until = now() + ${Duration.toMillis(lease)}::int * interval '1 millisecond'
            FROM (
              SELECT id FROM knowledge_files
              WHERE (status = 'pending' AND next_attempt_at <= now())
                 OR (status = 'processing' AND locked_until < now())
              ORDER BY next_attempt_at, uploaded_at
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ) AS due
            WHERE f.id = due.id
            RETURNING f.id, f.tenant_id, f.agent_id, f.filename, f.content, f.content_problem, f.attempts`,
        requeueOtherModels: (model) =>
          Effect.map(
            sql`
              UPDATE knowledge_files SET status = 'pending', attempts = 0, next_attempt_at = now()
              WHERE status = 'ready' AND embedding_model IS DISTINCT FROM ${model}
              RETURNING id`,
            (rows) => rows.length
          ),
        complete: (file, result) =>
          sql.withTransaction(Effect.gen(function*() {
            const owned = yield* sql`
              UPDATE knowledge_files
              SET status = 'ready', content_summary = ${result.summary}, chunk_count = ${result.chunks.length},
                  embedding_model = ${result.model}, processed_at = now(), locked_until = NULL, error = NULL
              WHERE id = ${file.id} AND status = 'processing' AND attempts = ${file.attempts}
              RETURNING id`
            if (owned.length === 0) return false
            yield* sql`DELETE FROM knowledge_chunks WHERE file_id = ${file.id}`
            for (let from = 0; from < result.chunks.length; from += insertBatch) {
              yield* insertChunks(file, result.model, result.chunks, from)
            }
            return true
          })),
        retryLater: (file, error, delay) =>
          Effect.asVoid(sql`
            UPDATE knowledge_files
            SET status = 'pending', error = ${error}, locked_until = NULL,
                next_attempt_at = now() + ${Duration.toMillis(delay)}::int * interval '1 millisecond'
            WHERE id = ${file.id} AND status = 'processing' AND attempts = ${file.attempts}`),
        fail: (file, error) =>
          Effect.asVoid(sql`
            UPDATE knowledge_files
            SET status = 'failed', error = ${error}, locked_until = NULL, processed_at = now()
            WHERE id = ${file.id} AND status = 'processing' AND attempts = ${file.attempts}`)
      })
    })
  )
}
