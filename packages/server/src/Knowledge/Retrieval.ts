/**
 * Knowledge retrieval: the top-k chunks of an agent (or of several agents,
 * for routing) for a query, always within the caller's tenant and only from
 * `ready` files embedded by the current embedding model.
 *
 * Two strategies, chosen by what the database offers (SearchCapabilities):
 * - `pgvector`: nearest neighbours by exact cosine distance over the agents' chunks;
 * - `lexical`: full-text candidates (`tsvector`, prefix-matched stems, and for
 *   typos the words of the agents' vocabularies similar to a query word by
 *   pg_trgm word similarity), re-ranked by the cosine of their stored `real[]`
 *   embeddings — PostgreSQL 15 without pgvector.
 */
import { Context, Effect, Layer } from "effect"
import type * as AiError from "effect/ai/AiError"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { cosine } from "../Ai/HashingEmbedder.ts"
import { ModelNames } from "../Ai/ModelNames.ts"
import { normalize, stem, stopwords } from "../Ai/Words.ts"
import { isUuid } from "../Platform/Ids.ts"
import { indexWords } from "./Lexemes.ts"
import { SearchCapabilities } from "./SearchCapabilities.ts"

export interface RetrievedChunk {
  readonly chunkId: string
  readonly fileId: string
  readonly agentId: string
  readonly filename: string
  readonly ordinal: number
  readonly content: string
  /** Cosine similarity of the chunk's embedding and the query's, in [-1, 1]. */
  readonly score: number
}

export interface SearchInput {
  readonly tenantId: string
  readonly agentIds: ReadonlyArray<string>
  readonly query: string
  /** How many chunks to return at most (default 4). */
  readonly limit?: number | undefined
}

/** Lexical candidates considered for re-ranking. */
const candidateLimit = 100
const maxQueryTerms = 24

interface CandidateRow {
  readonly id: string
  readonly file_id: string
  readonly agent_id: string
  readonly filename: string
  readonly ordinal: number
  readonly content: string
  readonly embedding: ReadonlyArray<number>
}

/**
 * The query's words for full-text search: lower-cased, stopwords dropped,
 * each as a prefix of its stem (`refunds` → `refund:*`, `policies` → `polic:*`)
 * so the `simple` configuration's unstemmed index still matches other forms.
 */
const queryWords = (query: string) => {
  const raw = indexWords(query)
  const result = new Set<string>()
  for (const word of raw) {
    const plain = normalize(word)
    if (stopwords.has(plain) || word.length < 2) continue
    // Accented words are matched as written (the index keeps accents).
    // Porter stems end in `i` where the word ends in `y` (policy → polici): cut it, so `polic:*` matches both forms.
    const prefix = plain !== word ? word : stem(word).replace(/(?<=.{3})[yei]$/u, "")
    result.add(prefix)
    if (result.size >= maxQueryTerms) break
  }
  return [...result]
}

export class Retrieval extends Context.Service<Retrieval, {
  /** Which strategy this database uses. */
  readonly mode: "pgvector" | "lexical"
  /** The chunks most similar to the query, best first. */
  readonly search: (input: SearchInput) => Effect.Effect<ReadonlyArray<RetrievedChunk>, AiError.AiError | SqlError>
}>()("@agent-platform/server/Knowledge/Retrieval") {
  /** Needs SqlClient, EmbeddingModel, ModelNames and SearchCapabilities. */
  static readonly layer = Layer.effect(
    Retrieval,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const embedder = yield* EmbeddingModel.EmbeddingModel
      const capabilities = yield* SearchCapabilities
      const model = (yield* ModelNames).embeddingModel

      const toChunk = (row: Omit<CandidateRow, "embedding">, score: number): RetrievedChunk => ({
        chunkId: row.id,
        fileId: row.file_id,
        agentId: row.agent_id,
        filename: row.filename,
        ordinal: row.ordinal,
        content: row.content,
        score
      })

      const byVector = (
        tenantId: string,
        agentIds: ReadonlyArray<string>,
        vector: ReadonlyArray<number>,
        limit: number
      ) => {
        // Most of a hashed embedding's dimensions are 0: written as such, the literal is a fraction of its size.
        const query = `[${vector.map((x) => (x === 0 ? "0" : x.toPrecision(7))).join(",")}]`
        // An exact scan of the agents' chunks (knowledge_chunks_agent_idx): the true nearest ones. The distance is
        // not the expression of the HNSW indexes a database migrated before 0017 may still have (`::vector(n)`), so
        // the planner never answers from an approximate index scan.
        return sql<Omit<CandidateRow, "embedding"> & { distance: number }>`
          SELECT c.id, c.file_id, c.agent_id, f.filename, c.ordinal, c.content,
                 c.embedding_vector <=> ${query}::vector AS distance
          FROM knowledge_chunks c
          JOIN knowledge_files f ON f.id = c.file_id AND f.status = 'ready'
          WHERE c.tenant_id = ${tenantId} AND c.agent_id = ANY(${agentIds}::uuid[])
            AND c.embedding_dims = ${vector.length} AND c.embedding_model = ${model}
          ORDER BY distance
          LIMIT ${limit}`.pipe(
          // Cosine distance is 1 - cosine similarity (NaN for a chunk without topic words: similarity 0).
          Effect.map((rows) => rows.map((row) => toChunk(row, Number.isFinite(row.distance) ? 1 - row.distance : 0)))
        )
      }

      const byWords = (
        tenantId: string,
        agentIds: ReadonlyArray<string>,
        query: string,
        vector: ReadonlyArray<number>,
        limit: number
      ) => {
        const words = queryWords(query)
        if (words.length === 0) return Effect.succeed([])
        const tsQuery = words.map((word) => `${word}:*`).join(" | ")
        const fuzzyWords = words.filter((word) => word.length >= 4)
        // Typos: the words of the agents' vocabularies (migration 0021) similar to a query word, each quoted as a
        // lexeme of its own (a quote or backslash in it doubled), or nothing.
        const similar = capabilities.trigram && fuzzyWords.length > 0
          ? sql`(
              SELECT string_agg(DISTINCT
                       '''' || replace(replace(v.word, '\\', '\\\\'), '''', '''''') || '''', ' | ')::tsquery
              FROM unnest(${fuzzyWords}::text[]) AS q (word)
              JOIN knowledge_words v ON v.word %> q.word
              WHERE v.tenant_id = ${tenantId} AND v.agent_id = ANY(${agentIds}::uuid[]))`
          : sql.literal("NULL::tsquery")
        return sql<CandidateRow>`
          WITH terms AS (SELECT to_tsquery('simple', ${tsQuery}) AS typed, ${similar} AS alike),
          q AS (SELECT coalesce(typed || alike, typed) AS query FROM terms)
          SELECT c.id, c.file_id, c.agent_id, f.filename, c.ordinal, c.content, c.embedding
          FROM q CROSS JOIN knowledge_chunks c
          JOIN knowledge_files f ON f.id = c.file_id AND f.status = 'ready'
          WHERE c.tenant_id = ${tenantId} AND c.agent_id = ANY(${agentIds}::uuid[]) AND c.embedding_model = ${model}
            AND c.content_tsv @@ q.query
          ORDER BY ts_rank(c.content_tsv, q.query) DESC
          LIMIT ${candidateLimit}`.pipe(
          Effect.map((rows) =>
            rows
              .map((row) => toChunk(row, cosine(vector, row.embedding)))
              .sort((a, b) => b.score - a.score)
              .slice(0, limit)
          )
        )
      }

      const search = Effect.fn("Retrieval.search")(function*(input: SearchInput) {
        const agentIds = input.agentIds.filter(isUuid)
        const query = input.query.trim()
        if (agentIds.length === 0 || query.length === 0) return []
        const limit = Math.max(1, Math.min(input.limit ?? 4, 50))
        const { vector } = yield* embedder.embed(query)
        if (vector.every((x) => x === 0)) return [] // nothing in the query to compare (only stopwords)
        return capabilities.pgvector
          ? yield* byVector(input.tenantId, agentIds, vector, limit)
          : yield* byWords(input.tenantId, agentIds, query, vector, limit)
      })

      return Retrieval.of({ mode: capabilities.pgvector ? "pgvector" : "lexical", search })
    })
  )
}
