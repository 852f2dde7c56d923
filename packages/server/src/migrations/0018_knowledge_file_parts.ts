/**
 * A long uploaded text is stored in parts of bounded size, one INSERT each,
 * instead of in `knowledge_files.content` in one statement: on the embedded
 * database every statement runs on the thread that serves requests, and
 * writing 2 MiB in one held it for 30–60 ms (more under load), on top of the
 * upload's parsing and checks. A file with parts keeps `content` empty; its
 * text is its parts in `part` order. `start_char` and `chars` count code points
 * (what `substr` counts), so the worker reads a section of the text without
 * the rest (Knowledge/KnowledgeRepo.ts `readContent`). Stored uncompressed
 * out of line, as `content` is (migration 0017).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS knowledge_file_parts (
      file_id uuid NOT NULL REFERENCES knowledge_files (id) ON DELETE CASCADE,
      part integer NOT NULL,
      start_char integer NOT NULL,
      chars integer NOT NULL,
      content text NOT NULL,
      PRIMARY KEY (file_id, part)
    )`
  yield* sql`ALTER TABLE knowledge_file_parts ALTER COLUMN content SET STORAGE EXTERNAL`
})
