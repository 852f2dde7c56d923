/**
 * Cheaper chunk writes where knowledge search runs on pgvector (the embedded
 * PGlite): there retrieval ranks an agent's chunks by exact cosine distance
 * (Knowledge/Retrieval.ts), so the indexes only the lexical strategy reads —
 * the full-text and trigram GIN indexes and the `content_tsv` column they
 * cover — and the HNSW indexes are dropped. Measured on PGlite, maintaining
 * them cost about 6 ms per 800-character chunk (HNSW alone ~4 ms), 80 % of
 * ingestion; an exact scan of an agent's chunks (through
 * `knowledge_chunks_agent_idx`) finds the true nearest chunks, where HNSW
 * only approximated them.
 *
 * PostgreSQL without pgvector keeps everything: its lexical search needs them.
 *
 * On both, an uploaded text is stored uncompressed out of line, so the worker
 * reads a large one a section at a time (`substr` then reads only those
 * pages) instead of decompressing megabytes in one statement — on the
 * embedded database, on the thread that serves requests.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE knowledge_files ALTER COLUMN content SET STORAGE EXTERNAL`
  const [row] = yield* sql<{ pgvector: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
    ) AS pgvector`
  if (!row.pgvector) return
  // The migration's 512-dimension index and any a provider's dimension added at run time.
  const vectorIndexes = yield* sql<{ name: string }>`
    SELECT indexname AS name FROM pg_indexes
    WHERE schemaname = current_schema() AND tablename = 'knowledge_chunks' AND indexname LIKE 'knowledge\\_chunks\\_vector\\_%'`
  for (const { name } of vectorIndexes) yield* sql`DROP INDEX IF EXISTS ${sql(name)}`
  yield* sql`DROP INDEX IF EXISTS knowledge_chunks_trgm_idx`
  yield* sql`DROP INDEX IF EXISTS knowledge_chunks_tsv_idx`
  yield* sql`ALTER TABLE knowledge_chunks DROP COLUMN IF EXISTS content_tsv`
})
