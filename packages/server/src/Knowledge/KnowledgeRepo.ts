/**
 * The knowledge_files and knowledge_chunks tables, and the ingestion queue
 * kept in knowledge_files: `status`, `attempts`, `next_attempt_at` and the
 * lease `locked_until`. Every read of tenant data filters by `tenant_id`.
 */
import { Context, Duration, Effect, Layer, Request } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { groupCommitEach } from "../Platform/GroupCommit.ts"
import { float4Array } from "../Platform/PgFloat4Arrays.ts"
import { type Lexemes, lexemesOf, tsvectorLiteralOf } from "./Lexemes.ts"
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
  /**
   * The text, when it is at most `inlineContentBytes`; a longer one is read
   * section by section (`readContent`), so no statement moves megabytes.
   */
  readonly content: string | null
  /** Why the upload cannot be processed, when ingest already knew (binary content). */
  readonly content_problem: string | null
  readonly attempts: number
}

export interface ChunkInsert {
  readonly content: string
  readonly embedding: ReadonlyArray<number>
}

/** A chunk of a claimed file, at its place in the file. */
export interface FileChunk extends ChunkInsert {
  readonly file: ClaimedFile
  readonly ordinal: number
}

const fileColumns =
  `id, tenant_id, agent_id, filename, content_summary, status, error, size_bytes, chunk_count, attempts,
  uploaded_at, processed_at`

/**
 * The vectors of a batch of chunks as one binary `real[]` parameter, one
 * vector after the other, and where each starts: the statement slices each
 * chunk's vector out of it. Sent in PostgreSQL's binary format, no element is
 * printed as a decimal (a fifth of the worker's CPU per chunk) nor parsed
 * again by the server (about a tenth of a chunk INSERT's server time), and
 * from a `Float32Array` in one pass (Platform/PgFloat4Arrays.ts). Each element
 * is stored as the nearest `real` to the model's number; a non-finite one as 0.
 */
const packVectors = (vectors: ReadonlyArray<ReadonlyArray<number>>) => {
  const starts = new Array<number>(vectors.length)
  let length = 0
  for (let i = 0; i < vectors.length; i++) {
    starts[i] = length
    length += vectors[i].length
  }
  const flat = new Float32Array(length)
  let at = 0
  for (const vector of vectors) {
    for (let i = 0; i < vector.length; i++) {
      const x = vector[i]
      flat[at++] = Number.isFinite(x) ? x : 0
    }
  }
  return { starts, flat: float4Array(flat) }
}

/**
 * The words of a batch of chunks for their agents' vocabularies (migration
 * 0021), as three columns: each agent's distinct words once, ordered by agent
 * then word. Deduplicated and ordered here rather than by the statement: there
 * sorting the ~45 words of each chunk (by the database's collation) and
 * discarding the repeats was a fifth of the statement's time. Any fixed order
 * does to keep two workers adding the same new words from deadlocking.
 */
const vocabularyOf = (chunks: ReadonlyArray<FileChunk>, lexemes: ReadonlyArray<Lexemes>) => {
  const byAgent = new Map<string, { readonly tenantId: string; readonly words: Set<string> }>()
  chunks.forEach((chunk, i) => {
    let entry = byAgent.get(chunk.file.agent_id)
    if (entry === undefined) {
      entry = { tenantId: chunk.file.tenant_id, words: new Set() }
      byAgent.set(chunk.file.agent_id, entry)
    }
    for (const word of lexemes[i].keys()) entry.words.add(word)
  })
  const agentIds: Array<string> = []
  const tenantIds: Array<string> = []
  const words: Array<string> = []
  for (const agentId of [...byAgent.keys()].sort()) {
    const { tenantId, words: agentWords } = byAgent.get(agentId)!
    for (const word of [...agentWords].sort()) {
      agentIds.push(agentId)
      tenantIds.push(tenantId)
      words.push(word)
    }
  }
  return { agentIds, tenantIds, words }
}

/**
 * UTF-16 units of an uploaded text stored in one statement: a longer text is
 * stored in parts of at most this many (migration 0018), each at most 192 KiB
 * of UTF-8, which the embedded database writes in a few milliseconds.
 */
export const partSize = 64 * 1024

/** Lets the event loop run what waits (requests, timers) before the next statement. */
const yieldToEventLoop = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Code points of a string (what PostgreSQL's `substr` and `length` count). */
export const codePoints = (text: string): number => {
  let count = 0
  for (let i = 0; i < text.length; i++, count++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++ // a surrogate pair is one character
  }
  return count
}

/** A text cut in pieces of at most `partSize` UTF-16 units, never between the halves of a surrogate pair. */
export const partsOf = (text: string): Array<string> => {
  const parts: Array<string> = []
  let from = 0
  while (from < text.length) {
    let to = Math.min(text.length, from + partSize)
    const last = text.charCodeAt(to - 1)
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--
    parts.push(text.slice(from, to))
    from = to
  }
  return parts
}

/** An upload to queue. */
export interface NewFile {
  readonly tenantId: string
  readonly agentId: string
  /** The space the uploader is bound to: the agent must be one of its agents. */
  readonly spaceId: string | null
  readonly filename: string
  readonly content: string
  readonly contentProblem: string | null
  readonly sizeBytes: number
}

/** An upload of at most `partSize` characters, stored in one row, in a statement with the others of the moment. */
interface InsertFile extends Request.Request<FileRow | undefined, SqlError> {
  readonly file: NewFile
}
const InsertFile = Request.of<InsertFile>()

/**
 * Uploads stored together take at most this many rows, or as many as reach
 * `maxInsertUnits` UTF-16 units of content (at most `partSize` more): a
 * statement of a few hundred KB at most, which the embedded database writes
 * without holding requests for long.
 */
const maxInsertBatch = 64
const maxInsertUnits = 2 * partSize

export class KnowledgeRepo extends Context.Service<KnowledgeRepo, {
  /**
   * Queues a file for an agent of the tenant (of space `spaceId` when given);
   * `undefined` (nothing written) when there is no such agent. Uploads made
   * while the previous ones are being stored share one statement (group
   * commit); a statement that fails is retried upload by upload, so that one
   * upload's failure (a NUL in its name) stays its own. Inside a
   * transaction, the upload is a statement of the transaction.
   */
  readonly insertFile: (file: NewFile) => Effect.Effect<FileRow | undefined, SqlError>
  /**
   * The tenant's files (of one agent when `agentId` is given; of space
   * `spaceId`'s agents only, when given), oldest first.
   */
  readonly listFiles: (
    tenantId: string,
    agentId: string | undefined,
    spaceId: string | null
  ) => Effect.Effect<ReadonlyArray<FileRow>, SqlError>
  readonly findFile: (tenantId: string, fileId: string) => Effect.Effect<FileRow | undefined, SqlError>
  /**
   * Deletes a file and (by cascade) its chunks; false when it is not the
   * tenant's (or not of an agent of space `spaceId`, when given).
   */
  readonly deleteFile: (tenantId: string, fileId: string, spaceId: string | null) => Effect.Effect<boolean, SqlError>
  /**
   * Takes up to `limit` due files off the queue — pending ones whose time has
   * come and processing ones whose lease expired (a worker died) — marking
   * them processing under a lease of `lease`, with `attempts` incremented.
   */
  readonly claimDue: (
    limit: number,
    lease: Duration.Duration,
    inlineContentBytes: number
  ) => Effect.Effect<ReadonlyArray<ClaimedFile>, SqlError>
  /**
   * Up to `length` characters (code points) of a file's text from character
   * `from` (0-based): a slice read without the rest (the column is stored
   * uncompressed out of line, migration 0017).
   */
  readonly readContent: (fileId: string, from: number, length: number) => Effect.Effect<string, SqlError>
  /** Puts ready files embedded by another model back in the queue (the embedding model changed). */
  readonly requeueOtherModels: (model: string) => Effect.Effect<number, SqlError>
  /** Pushes the lease of files still being processed by these attempts `lease` into the future (the heartbeat). */
  readonly extendLeases: (files: ReadonlyArray<ClaimedFile>, lease: Duration.Duration) => Effect.Effect<void, SqlError>
  /**
   * Writes chunks of files in one statement (any number of files), each only
   * while its attempt still holds the file. Safe to repeat: a chunk already
   * written (by this attempt or an earlier one of the same content) is
   * overwritten. The chunks stay out of search until the file is `ready`.
   * Without pgvector their words also join their agent's vocabulary (typo
   * search, migration 0021).
   */
  readonly storeChunks: (model: string, chunks: ReadonlyArray<FileChunk>) => Effect.Effect<void, SqlError>
  /**
   * Marks files ready, with their summaries and chunk counts, in one
   * statement that also drops chunks beyond each file's count; returns the
   * ids it marked (not those whose attempt lost its lease, or that were deleted).
   */
  readonly markReady: (
    model: string,
    files: ReadonlyArray<{
      readonly file: ClaimedFile
      readonly summary: string
      readonly chunkCount: number
    }>
  ) => Effect.Effect<ReadonlySet<string>, SqlError>
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
      /**
       * The space binding of a statement on knowledge_files (Access/SpaceBinding.ts): with a space, only the files of
       * its agents — part of the statement, so a bound key costs no read of its space's agents first.
       */
      const inSpace = (tenantId: string, spaceId: string | null) =>
        spaceId === null
          ? sql``
          : sql` AND agent_id IN (SELECT id FROM agents WHERE tenant_id = ${tenantId} AND space_id = ${spaceId})`

      const storeChunks = (model: string, chunks: ReadonlyArray<FileChunk>) => {
        if (chunks.length === 0) return Effect.void
        const fileIds = chunks.map((chunk) => chunk.file.id)
        const tenantIds = chunks.map((chunk) => chunk.file.tenant_id)
        const agentIds = chunks.map((chunk) => chunk.file.agent_id)
        const attempts = chunks.map((chunk) => chunk.file.attempts)
        const ordinals = chunks.map((chunk) => chunk.ordinal)
        const contents = chunks.map((chunk) => chunk.content)
        const dims = chunks.map((chunk) => chunk.embedding.length)
        const { flat, starts } = packVectors(chunks.map((chunk) => chunk.embedding))
        const vector = sql`(${flat}::real[])[c.start + 1 : c.start + c.dims]`
        // Only the attempt holding the file writes. A scalar subquery by primary key: as an EXISTS (a join) the
        // planner could walk the queue index over every pending file for each chunk, a cost growing with the backlog.
        const owned = sql`(
          SELECT f.status = 'processing' AND f.attempts = c.attempt FROM knowledge_files f WHERE f.id = c.file_id)`
        // With pgvector the vector column is what search reads: the `real[]` copy (for the lexical strategy's
        // re-ranking) is left empty, as parsing and storing 512 more numbers per chunk is a third of the write.
        if (capabilities.pgvector) {
          return Effect.asVoid(sql`
            INSERT INTO knowledge_chunks (file_id, tenant_id, agent_id, ordinal, content, embedding, embedding_model,
                                          embedding_dims, embedding_vector)
            SELECT c.file_id, c.tenant_id, c.agent_id, c.ordinal, c.content, '{}'::real[], ${model}, c.dims,
                   ${vector}::vector
            FROM unnest(${fileIds}::uuid[], ${tenantIds}::uuid[], ${agentIds}::uuid[], ${attempts}::int[], ${ordinals}::int[],
                        ${contents}::text[], ${dims}::int[], ${starts}::int[])
              AS c (file_id, tenant_id, agent_id, attempt, ordinal, content, dims, start)
            WHERE ${owned}
            ON CONFLICT (file_id, ordinal) DO UPDATE
            SET content = excluded.content, embedding = excluded.embedding, embedding_model = excluded.embedding_model,
                embedding_dims = excluded.embedding_dims, embedding_vector = excluded.embedding_vector`)
        }
        // Lexical search's `tsvector` of each chunk, as a literal (Knowledge/Lexemes.ts, migration 0025).
        const lexemes = contents.map(lexemesOf)
        const literals = lexemes.map(tsvectorLiteralOf)
        const vocabulary = vocabularyOf(chunks, lexemes)
        // The chunks' words join their agent's vocabulary (migration 0021) in the same statement, in the order given
        // (see `vocabularyOf`), for the agents of which a chunk was stored: a word of a chunk whose attempt lost its
        // file may join too, a stale word as those of a deleted file (harmless, migration 0021).
        return Effect.asVoid(sql`
          WITH stored AS (
            INSERT INTO knowledge_chunks (file_id, tenant_id, agent_id, ordinal, content, content_tsv, embedding,
                                          embedding_model, embedding_dims)
            SELECT c.file_id, c.tenant_id, c.agent_id, c.ordinal, c.content, c.lexemes::tsvector, ${vector}, ${model},
                   c.dims
            FROM unnest(${fileIds}::uuid[], ${tenantIds}::uuid[], ${agentIds}::uuid[], ${attempts}::int[],
                        ${ordinals}::int[], ${contents}::text[], ${literals}::text[], ${dims}::int[], ${starts}::int[])
              AS c (file_id, tenant_id, agent_id, attempt, ordinal, content, lexemes, dims, start)
            WHERE ${owned}
            ON CONFLICT (file_id, ordinal) DO UPDATE
            SET content = excluded.content, content_tsv = excluded.content_tsv, embedding = excluded.embedding,
                embedding_model = excluded.embedding_model, embedding_dims = excluded.embedding_dims
            RETURNING agent_id
          )
          INSERT INTO knowledge_words (agent_id, tenant_id, word)
          SELECT w.agent_id, w.tenant_id, w.word
          FROM unnest(${vocabulary.agentIds}::uuid[], ${vocabulary.tenantIds}::uuid[], ${vocabulary.words}::text[])
            WITH ORDINALITY AS w (agent_id, tenant_id, word, n)
          WHERE w.agent_id IN (SELECT agent_id FROM stored)
          ORDER BY w.n
          ON CONFLICT DO NOTHING`)
      }

      const markReady = (
        model: string,
        files: ReadonlyArray<{ readonly file: ClaimedFile; readonly summary: string; readonly chunkCount: number }>
      ) => {
        if (files.length === 0) return Effect.succeed(new Set<string>())
        const ids = files.map(({ file }) => file.id)
        const attempts = files.map(({ file }) => file.attempts)
        const summaries = files.map(({ summary }) => summary)
        const counts = files.map(({ chunkCount }) => chunkCount)
        // One statement (atomic on its own): the chunks an earlier attempt (or another model's chunking) left
        // beyond the new count are dropped with the marking, in one round trip instead of a transaction's four.
        // Arrays, whose length the planner sees, so it looks the files up by primary key rather than hashing the
        // whole queue.
        return Effect.map(
          sql<{ id: string }>`
            WITH marked AS (
              UPDATE knowledge_files f
              SET status = 'ready', content_summary = d.summary, chunk_count = d.chunk_count, embedding_model = ${model},
                  processed_at = now(), locked_until = NULL, error = NULL
              FROM unnest(${ids}::uuid[], ${attempts}::int[], ${summaries}::text[], ${counts}::int[])
                AS d (id, attempts, summary, chunk_count)
              WHERE f.id = d.id AND f.status = 'processing' AND f.attempts = d.attempts
              RETURNING f.id, f.chunk_count
            ), dropped AS (
              DELETE FROM knowledge_chunks c USING marked m WHERE c.file_id = m.id AND c.ordinal >= m.chunk_count
            )
            SELECT id FROM marked`,
          (rows): ReadonlySet<string> => new Set(rows.map((row) => row.id))
        )
      }

      /**
       * One statement for the uploads: each row only if its agent is the tenant's (and of its space, when bound);
       * the rows written, by upload (`undefined`: no such agent). The ids are chosen here, to tell the rows apart.
       */
      const insertRows = (files: ReadonlyArray<NewFile>) => {
        const ids = files.map(() => crypto.randomUUID())
        return Effect.map(
          sql<FileRow>`
            INSERT INTO knowledge_files (id, tenant_id, agent_id, filename, content, content_problem, size_bytes)
            SELECT v.id, v.tenant_id, v.agent_id, v.filename, v.content, v.content_problem, v.size_bytes
            FROM (VALUES ${
            sql.csv(files.map((file, i) =>
              sql`(${ids[i]}::uuid, ${file.tenantId}::uuid, ${file.agentId}::uuid, ${file.spaceId}::uuid,
                   ${file.filename}::text, ${file.content}::text, ${file.contentProblem}::text, ${file.sizeBytes}::int)`
            ))
          }) AS v (id, tenant_id, agent_id, space_id, filename, content, content_problem, size_bytes)
            WHERE EXISTS (
              SELECT 1 FROM agents a
              WHERE a.tenant_id = v.tenant_id AND a.id = v.agent_id AND (v.space_id IS NULL OR a.space_id = v.space_id))
            RETURNING ${columns}`,
          (rows) => {
            const byId = new Map(rows.map((row) => [row.id, row]))
            return ids.map((id) => byId.get(id))
          }
        )
      }

      const filesResolver = groupCommitEach<InsertFile>({
        maxBatch: maxInsertBatch,
        weight: { of: ({ file }) => file.content.length, max: maxInsertUnits },
        run: (requests) => insertRows(requests.map((request) => request.file))
      })

      return KnowledgeRepo.of({
        // One statement: the agent (and space) check and the insert, with the other uploads of the moment.
        insertFile: (file) => {
          if (file.content.length <= partSize) {
            // Inside a transaction (accepting a correction), the row is the transaction's: never another caller's batch.
            return Effect.flatMap(
              Effect.serviceOption(sql.transactionService),
              (transaction) =>
                transaction._tag === "Some"
                  ? Effect.map(insertRows([file]), (rows) => rows[0])
                  : Effect.request(InsertFile({ file }), filesResolver)
            )
          }
          // A long text: the row, then its parts one statement each, letting requests run between them
          // (migration 0018). One transaction, so the worker never claims a file whose parts are not all there.
          return sql.withTransaction(Effect.gen(function*() {
            const [row] = yield* insertRows([{ ...file, content: "" }])
            if (row === undefined) return undefined
            let startChar = 0
            for (const [part, text] of partsOf(file.content).entries()) {
              yield* yieldToEventLoop
              const chars = codePoints(text)
              yield* sql`
                INSERT INTO knowledge_file_parts (file_id, part, start_char, chars, content)
                VALUES (${row.id}, ${part}, ${startChar}, ${chars}, ${text})`
              startChar += chars
            }
            return row
          }))
        },
        listFiles: (tenantId, agentId, spaceId) =>
          sql<FileRow>`
            SELECT ${columns} FROM knowledge_files
            WHERE tenant_id = ${tenantId}${agentId === undefined ? sql`` : sql` AND agent_id = ${agentId}`}${
            inSpace(tenantId, spaceId)
          }
            ORDER BY uploaded_at, id`,
        findFile: (tenantId, fileId) =>
          Effect.map(
            sql<FileRow>`SELECT ${columns} FROM knowledge_files WHERE tenant_id = ${tenantId} AND id = ${fileId}`,
            (rows) => rows[0]
          ),
        deleteFile: (tenantId, fileId, spaceId) =>
          Effect.map(
            sql`
              DELETE FROM knowledge_files
              WHERE tenant_id = ${tenantId} AND id = ${fileId}${inSpace(tenantId, spaceId)}
              RETURNING id`,
            (rows) => rows.length > 0
          ),
        claimDue: (limit, lease, inlineContentBytes) =>
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
            RETURNING f.id, f.tenant_id, f.agent_id, f.filename,
                      CASE WHEN f.size_bytes <= ${inlineContentBytes} THEN f.content END AS content,
                      f.content_problem, f.attempts`,
        // From the parts that overlap the range when the text is stored in parts (migration 0018), else the column.
        readContent: (fileId, from, length) =>
          Effect.map(
            sql<{ part: string | null }>`
              SELECT coalesce(
                (SELECT string_agg(
                    substr(p.content, greatest(${from}::int - p.start_char, 0) + 1,
                           ${from + length}::int - greatest(${from}::int, p.start_char)),
                    '' ORDER BY p.part)
                 FROM knowledge_file_parts p
                 WHERE p.file_id = ${fileId} AND p.start_char < ${from + length}::int
                   AND p.start_char + p.chars > ${from}::int),
                (SELECT substr(content, ${from + 1}, ${length}) FROM knowledge_files WHERE id = ${fileId})
              ) AS part`,
            (rows) => rows[0]?.part ?? ""
          ),
        requeueOtherModels: (model) =>
          Effect.map(
            sql`
              UPDATE knowledge_files SET status = 'pending', attempts = 0, next_attempt_at = now()
              WHERE status = 'ready' AND embedding_model IS DISTINCT FROM ${model}
              RETURNING id`,
            (rows) => rows.length
          ),
        extendLeases: (files, lease) =>
          files.length === 0 ? Effect.void : Effect.asVoid(sql`
            UPDATE knowledge_files f
            SET locked_until = now() + ${Duration.toMillis(lease)}::int * interval '1 millisecond'
            FROM unnest(${files.map((file) => file.id)}::uuid[], ${
            files.map((file) => file.attempts)
          }::int[]) AS h (id, attempts)
            WHERE f.id = h.id AND f.status = 'processing' AND f.attempts = h.attempts`),
        storeChunks,
        markReady,
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
