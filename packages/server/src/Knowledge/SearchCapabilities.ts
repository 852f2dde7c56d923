/**
 * What this database offers knowledge search, found once at start: a
 * pgvector column on `knowledge_chunks` (the embedded PGlite; migration 0005
 * adds it only where `vector` is available) and pg_trgm (both backends).
 * Production PostgreSQL 15 without pgvector searches full-text (typos through
 * a trigram index on each agent's vocabulary, migration 0021) and re-ranks by
 * cosine instead. With pgvector, search is an exact scan of the
 * agents' chunks (no HNSW index to maintain per chunk: migration 0017).
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export class SearchCapabilities extends Context.Service<SearchCapabilities, {
  /** `knowledge_chunks.embedding_vector` exists (pgvector installed). */
  readonly pgvector: boolean
  /** pg_trgm is installed (typos matched through the vocabulary's trigram index). */
  readonly trigram: boolean
}>()("@agent-platform/server/Knowledge/SearchCapabilities") {
  static readonly layer = Layer.effect(
    SearchCapabilities,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ pgvector: boolean; trigram: boolean }>`
        SELECT
          EXISTS (
            SELECT 1 FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
          ) AS pgvector,
          EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS trigram`
      return SearchCapabilities.of({ pgvector: row.pgvector, trigram: row.trigram })
    })
  )
}
