/**
 * Cheaper chunk writes, measured on PostgreSQL 15 with 4 KB documents (7
 * chunks of ~800 characters each):
 *
 * - A chunk's tenant and agent are its file's (the worker copies them from the
 *   claimed file), and the file's foreign key already removes its chunks with
 *   it, its agent or its tenant. Their own foreign keys only added two checks
 *   per chunk, each locking the tenant's or agent's row (`FOR KEY SHARE`) —
 *   about a tenth of a chunk INSERT's server time. Dropped on both databases;
 *   the columns stay, for search's filters.
 * - Where search is lexical (PostgreSQL without pgvector): a chunk row (text,
 *   lexemes, a 2 KiB `real[]` embedding, ~4 KB in all) is kept whole up to 8160
 *   bytes (`toast_tuple_target`), as on the embedded database (migration 0020):
 *   its embedding — random-looking numbers that lz4 cannot shrink — is no
 *   longer tried for compression and then moved to two TOAST chunks and
 *   their index entries. Rows written before stay as they are; both are read alike.
 *
 * Idempotent (the tests run it again on a migrated database).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE knowledge_chunks DROP CONSTRAINT IF EXISTS knowledge_chunks_tenant_id_fkey`
  yield* sql`ALTER TABLE knowledge_chunks DROP CONSTRAINT IF EXISTS knowledge_chunks_agent_id_fkey`
  const [row] = yield* sql<{ pgvector: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
    ) AS pgvector`
  if (!row.pgvector) yield* sql`ALTER TABLE knowledge_chunks SET (toast_tuple_target = 8160)`
})
