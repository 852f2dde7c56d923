/**
 * The full-text lexemes of a chunk (`knowledge_chunks.content_tsv`, PostgreSQL
 * without pgvector) come from the ingestion worker instead of a generated
 * column. Measured on PostgreSQL 15 with 800-character chunks,
 * `to_tsvector('simple', content)` cost 46 µs of the server's CPU per chunk
 * (its parser), 60 % of the chunk INSERT; reading the worker's `tsvector`
 * literal costs 10 µs. The worker cuts words as search cuts a query's
 * (Knowledge/Lexemes.ts): lower-cased runs of letters and digits, accents kept.
 *
 * The column keeps its values (`DROP EXPRESSION`). A chunk written without
 * lexemes — by a replica still running the previous build during a rolling
 * upgrade, or by hand — gets PostgreSQL's own, computed by a trigger, as does
 * a chunk whose text changes without new lexemes; the worker's writes, which
 * always carry them, never run its function.
 *
 * Idempotent (the tests run it again on a migrated database); nothing to do
 * where search runs on pgvector (the column was dropped by 0017).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* sql<{ is_generated: string }>`
    SELECT is_generated FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'content_tsv'`
  if (columns.length === 0) return
  if (columns[0].is_generated === "ALWAYS") {
    yield* sql`ALTER TABLE knowledge_chunks ALTER COLUMN content_tsv DROP EXPRESSION`
  }
  yield* sql`
    CREATE OR REPLACE FUNCTION knowledge_chunks_default_lexemes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.content_tsv := to_tsvector('simple', NEW.content);
      RETURN NEW;
    END
    $$`
  yield* sql`DROP TRIGGER IF EXISTS knowledge_chunks_lexemes_on_insert ON knowledge_chunks`
  yield* sql`
    CREATE TRIGGER knowledge_chunks_lexemes_on_insert
    BEFORE INSERT ON knowledge_chunks
    FOR EACH ROW WHEN (NEW.content_tsv IS NULL)
    EXECUTE FUNCTION knowledge_chunks_default_lexemes()`
  yield* sql`DROP TRIGGER IF EXISTS knowledge_chunks_lexemes_on_update ON knowledge_chunks`
  yield* sql`
    CREATE TRIGGER knowledge_chunks_lexemes_on_update
    BEFORE UPDATE OF content ON knowledge_chunks
    FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content AND NEW.content_tsv IS NOT DISTINCT FROM OLD.content_tsv)
    EXECUTE FUNCTION knowledge_chunks_default_lexemes()`
})
