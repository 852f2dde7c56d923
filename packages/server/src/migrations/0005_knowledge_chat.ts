/**
 * Knowledge (files, their chunks and the ingestion queue) and chat (chats,
 * messages, slot-filling state).
 *
 * Search must work on PostgreSQL 15 without pgvector: chunks always keep their
 * embedding as `real[]` and a full-text `tsvector`; a trigram index is added
 * where pg_trgm is available, and a pgvector column with an HNSW index where
 * `pg_available_extensions` lists `vector` (the embedded PGlite). Extensions
 * are created in a savepoint, so a role that may not create them gets the
 * plain schema instead of a failed migration.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/** The hashing embedder's dimension (Ai/HashingEmbedder.ts); other dimensions get their index at run time. */
const embeddedDimensions = 512

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const available = new Set(
    (yield* sql<{ name: string }>`
      SELECT name FROM pg_available_extensions WHERE name IN ('vector', 'pg_trgm')`).map((row) => row.name)
  )
  for (const extension of ["vector", "pg_trgm"]) {
    if (!available.has(extension)) continue
    yield* sql.withTransaction(sql`CREATE EXTENSION IF NOT EXISTS ${sql(extension)}`).pipe(
      Effect.catch((error) =>
        Effect.logWarning(`extension ${extension} is available but could not be created; continuing without it`, error)
      )
    )
  }
  const installed = new Set(
    (yield* sql<{ extname: string }>`
      SELECT extname FROM pg_extension WHERE extname IN ('vector', 'pg_trgm')`).map((row) => row.extname)
  )

  yield* sql`
    CREATE TABLE knowledge_files (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      filename text NOT NULL,
      content text NOT NULL,
      -- Why the uploaded bytes cannot be processed, found at upload (text columns cannot hold NUL bytes).
      content_problem text,
      content_summary text NOT NULL DEFAULT '',
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'ready', 'failed')),
      error text,
      size_bytes integer NOT NULL,
      chunk_count integer NOT NULL DEFAULT 0,
      embedding_model text,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz,
      uploaded_at timestamptz NOT NULL DEFAULT now(),
      processed_at timestamptz
    )`
  yield* sql`CREATE INDEX knowledge_files_agent_idx ON knowledge_files (tenant_id, agent_id, uploaded_at)`
  // The queue: only unfinished files are in this index, so claiming stays cheap however many are ready.
  yield* sql`
    CREATE INDEX knowledge_files_queue_idx ON knowledge_files (next_attempt_at)
    WHERE status IN ('pending', 'processing')`

  yield* sql`
    CREATE TABLE knowledge_chunks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      file_id uuid NOT NULL REFERENCES knowledge_files (id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      ordinal integer NOT NULL,
      content text NOT NULL,
      content_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
      embedding real[] NOT NULL,
      embedding_model text NOT NULL,
      embedding_dims integer NOT NULL,
      UNIQUE (file_id, ordinal)
    )`
  yield* sql`CREATE INDEX knowledge_chunks_agent_idx ON knowledge_chunks (tenant_id, agent_id)`
  yield* sql`CREATE INDEX knowledge_chunks_tsv_idx ON knowledge_chunks USING gin (content_tsv)`
  if (installed.has("pg_trgm")) {
    yield* sql`CREATE INDEX knowledge_chunks_trgm_idx ON knowledge_chunks USING gin (content gin_trgm_ops)`
  }
  if (installed.has("vector")) {
    // Untyped `vector`: providers differ in dimension; each dimension gets its own partial index.
    yield* sql`ALTER TABLE knowledge_chunks ADD COLUMN embedding_vector vector`
    yield* sql.unsafe(`
      CREATE INDEX knowledge_chunks_vector_${embeddedDimensions}_idx ON knowledge_chunks
      USING hnsw ((embedding_vector::vector(${embeddedDimensions})) vector_cosine_ops)
      WHERE embedding_dims = ${embeddedDimensions}`)
  }

  yield* sql`
    CREATE TABLE chats (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
      agent_id uuid REFERENCES agents (id) ON DELETE SET NULL,
      key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL,
      user_id uuid REFERENCES users (id) ON DELETE SET NULL,
      seed_history jsonb NOT NULL DEFAULT '[]'::jsonb,
      last_seq integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX chats_tenant_idx ON chats (tenant_id, space_id, created_at)`

  yield* sql`
    CREATE TABLE chat_messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      chat_id uuid NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('user', 'agent')),
      content text NOT NULL,
      agent_id uuid REFERENCES agents (id) ON DELETE SET NULL,
      seq integer NOT NULL,
      tokens_input integer NOT NULL DEFAULT 0,
      tokens_output integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (chat_id, seq)
    )`
  yield* sql`CREATE INDEX chat_messages_tenant_idx ON chat_messages (tenant_id, created_at)`

  // The action a chat is preparing: parameters collected so far, or waiting for the user's confirmation.
  yield* sql`
    CREATE TABLE chat_pending_actions (
      chat_id uuid PRIMARY KEY REFERENCES chats (id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      action_id uuid NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
      stage text NOT NULL CHECK (stage IN ('collecting', 'confirming')),
      params jsonb NOT NULL DEFAULT '{}'::jsonb,
      asking text,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
