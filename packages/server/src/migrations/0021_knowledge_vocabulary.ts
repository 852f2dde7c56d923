/**
 * Typo-tolerant lexical search without a trigram index over every chunk's
 * text (PostgreSQL without pgvector; the embedded database searches by vector
 * and is left alone). Measured with 4 KB documents, maintaining the trigram
 * GIN index on `knowledge_chunks.content` was half of PostgreSQL's CPU per
 * ingested document.
 *
 * Instead each agent has a vocabulary: the distinct words (`simple` full-text
 * lexemes) of its chunks, one row each, with the trigram index on the word.
 * Ingestion adds a chunk's words in the statement that writes the chunk (a
 * word already there costs a primary-key probe; a new word is rare after an
 * agent's first documents). Search maps each query word to the similar words
 * of the agents' vocabularies and matches chunks through the full-text index
 * (Knowledge/Retrieval.ts).
 *
 * The words of a deleted (or failed) file stay: counting who still uses a word
 * would put a write per word back on every chunk. A stale word only adds a
 * term to a query's full-text match, which finds chunks of `ready` files
 * alone, so it never brings back what was deleted. An agent's deletion (and so
 * its tenant's) removes its vocabulary.
 *
 * Idempotent (the tests run it again on a migrated database): the vocabulary
 * is filled from the chunks already stored, and the chunk trigram index dropped.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ pgvector: boolean; trigram: boolean }>`
    SELECT
      EXISTS (
        SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
      ) AS pgvector,
      EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS trigram`
  if (row.pgvector) return
  // No foreign key on the tenant: the agent's is enough to remove the rows with it, and each new word checks one.
  yield* sql`
    CREATE TABLE IF NOT EXISTS knowledge_words (
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL,
      word text NOT NULL,
      PRIMARY KEY (agent_id, word)
    )`
  yield* sql`
    INSERT INTO knowledge_words (agent_id, tenant_id, word)
    SELECT DISTINCT c.agent_id, c.tenant_id, w.word
    FROM knowledge_chunks c CROSS JOIN unnest(tsvector_to_array(c.content_tsv)) AS w (word)
    ON CONFLICT DO NOTHING`
  if (row.trigram) {
    yield* sql`CREATE INDEX IF NOT EXISTS knowledge_words_trgm_idx ON knowledge_words USING gin (word gin_trgm_ops)`
  }
  yield* sql`DROP INDEX IF EXISTS knowledge_chunks_trgm_idx`
})
