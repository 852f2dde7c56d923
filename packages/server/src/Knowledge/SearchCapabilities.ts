/**
 * What this database offers knowledge search, found once at start: a
 * pgvector column on `knowledge_chunks` (the embedded PGlite; migration 0005
 * adds it only where `vector` is available) and pg_trgm (both backends).
 * Production PostgreSQL 15 without pgvector searches full-text + trigram and
 * re-ranks by cosine instead.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export class SearchCapabilities extends Context.Service<SearchCapabilities, {
  /** `knowledge_chunks.embedding_vector` exists (pgvector installed). */
  readonly pgvector: boolean
  /** pg_trgm is installed (trigram candidates and index). */
  readonly trigram: boolean
  /**
   * Makes sure an HNSW index exists for vectors of this dimension (the
   * migration creates the embedder's 512; a provider's model may differ).
   */
  readonly ensureVectorIndex: (dimensions: number) => Effect.Effect<void, SqlError>
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
      const indexed = new Set<number>()
      const ensureVectorIndex = (dimensions: number) =>
        !row.pgvector || indexed.has(dimensions) || !Number.isInteger(dimensions) || dimensions <= 0 ||
          dimensions > 16_000
          ? Effect.void
          : sql.unsafe(`
              CREATE INDEX IF NOT EXISTS knowledge_chunks_vector_${dimensions}_idx ON knowledge_chunks
              USING hnsw ((embedding_vector::vector(${dimensions})) vector_cosine_ops)
              WHERE embedding_dims = ${dimensions}`).pipe(
            // Two replicas creating it at once: the loser's error means the index exists.
            Effect.catch((error) =>
              Effect.logWarning(`could not create the vector index for ${dimensions} dimensions`, error)
            ),
            Effect.tap(() => Effect.sync(() => indexed.add(dimensions))),
            Effect.asVoid
          )
      return SearchCapabilities.of({ pgvector: row.pgvector, trigram: row.trigram, ensureVectorIndex })
    })
  )
}
