/**
 * Knowledge ingestion (spec: /v1/knowledge, "States and transitions"): the
 * queue moves a file pending → processing → ready, or to failed with an error;
 * chunks overlap; retrieval finds the right chunk on the embedded database
 * (pgvector) and on PostgreSQL 15 (full-text + trigram, re-ranked by cosine),
 * always within the tenant and the agents asked for.
 */
import { assert, describe, it as plainIt, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer, Ref } from "effect"
import * as AiError from "effect/ai/AiError"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as SqlClient from "effect/sql/SqlClient"
import * as HashingEmbedder from "../src/Ai/HashingEmbedder.ts"
import { chunkOverlap, chunkTarget, chunkText, normalizeDocument, summarize } from "../src/Knowledge/Chunking.ts"
import { defaultOptions, IngestionQueue, sectionSize, sectionsOf } from "../src/Knowledge/IngestionQueue.ts"
import { IngestionWorker } from "../src/Knowledge/IngestionWorker.ts"
import { KnowledgeFiles } from "../src/Knowledge/KnowledgeFiles.ts"
import { KnowledgeRepo, partSize } from "../src/Knowledge/KnowledgeRepo.ts"
import { indexWords, tsvectorLiteral } from "../src/Knowledge/Lexemes.ts"
import { Retrieval } from "../src/Knowledge/Retrieval.ts"
import { SearchCapabilities } from "../src/Knowledge/SearchCapabilities.ts"
import knowledgeVocabulary from "../src/migrations/0021_knowledge_vocabulary.ts"
import knowledgeChunkLexemes from "../src/migrations/0025_knowledge_chunk_lexemes.ts"
import { ServerConfig } from "../src/Platform/Config.ts"
import { Notifications } from "../src/Platform/Notifications.ts"
import { shippingGuide } from "./Documents.ts"
import { adminClient, bearer, createKey, http, json, layer as testServer, serverSuite } from "./TestServer.ts"

// ---------------------------------------------------------------------------
// A controllable embedding model: the hashing embedder, unless a test makes it
// fail or hold until released.

type EmbedderMode =
  | { readonly _tag: "normal" }
  | { readonly _tag: "failing"; readonly times: number }
  | { readonly _tag: "held"; readonly entered: Deferred.Deferred<void>; readonly release: Deferred.Deferred<void> }

const control = Ref.makeUnsafe<EmbedderMode>({ _tag: "normal" })

const ControlledEmbedder = Layer.effect(
  EmbeddingModel.EmbeddingModel,
  Effect.gen(function*() {
    const hashing = yield* HashingEmbedder.make
    return yield* EmbeddingModel.make({
      embedMany: ({ inputs }) =>
        Effect.gen(function*() {
          const mode = yield* Ref.get(control)
          if (mode._tag === "failing" && mode.times > 0) {
            yield* Ref.set(control, { _tag: "failing", times: mode.times - 1 })
            return yield* AiError.make({
              module: "TestEmbedder",
              method: "embedMany",
              reason: new AiError.InternalProviderError({ description: "the embedding service is down" })
            })
          }
          if (mode._tag === "held") {
            yield* Deferred.succeed(mode.entered, undefined)
            yield* Deferred.await(mode.release)
          }
          const response = yield* hashing.embedMany(inputs)
          return {
            results: response.embeddings.map((e) => [...e.vector]),
            usage: { inputTokens: response.usage.inputTokens }
          }
        })
    })
  })
)

const KnowledgeLive = Layer.mergeAll(
  KnowledgeFiles.layer,
  IngestionQueue.layerWith({ maxAttempts: 2, retryDelay: () => Duration.zero, lease: "1 minute" }),
  Retrieval.layer
).pipe(
  Layer.provideMerge(KnowledgeRepo.layer),
  Layer.provideMerge(SearchCapabilities.layer),
  Layer.provideMerge(ControlledEmbedder)
)

// ---------------------------------------------------------------------------
// Fixtures

const bootstrapTenant = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.map(sql<{ id: string }>`SELECT id FROM tenants ORDER BY created_at LIMIT 1`, (rows) => rows[0].id)
)

const newTenant = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    Effect.map(
      sql<{ id: string }>`INSERT INTO tenants (name) VALUES (${`t-${crypto.randomUUID()}`}) RETURNING id`,
      (rows) => rows[0].id
    )
)

const newAgent = (tenantId: string, name = "Helper") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [space] = yield* sql<{ id: string }>`
      INSERT INTO spaces (tenant_id, code, name) VALUES (${tenantId}, ${`s-${
      crypto.randomUUID().slice(0, 8)
    }`}, 'Space')
      RETURNING id`
    const [agent] = yield* sql<{ id: string }>`
      INSERT INTO agents (tenant_id, space_id, name, summary) VALUES (${tenantId}, ${space.id}, ${name}, 'helps') RETURNING id`
    return agent.id
  })

/** The office guide queued for a new agent of the bootstrap tenant. */
const queuedOfficeGuide = Effect.gen(function*() {
  const files = yield* KnowledgeFiles
  const tenantId = yield* bootstrapTenant
  const agentId = yield* newAgent(tenantId)
  const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
  return { tenantId, agentId, file_id }
})

const statusOf = (tenantId: string, fileId: string) =>
  Effect.flatMap(KnowledgeFiles, (files) => files.get({ tenantId, fileId }))

const chunksOf = (fileId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ ordinal: number; content: string; tenant_id: string; agent_id: string }>`
      SELECT ordinal, content, tenant_id, agent_id FROM knowledge_chunks WHERE file_id = ${fileId} ORDER BY ordinal`
  )

const refundPolicy = [
  "# Returns and refunds",
  "",
  "Customers may return any unused item within 30 days of delivery. Items must be in their original packaging.",
  "",
  "Refunds are processed within 14 business days after the returned item reaches our warehouse. The money goes back to the original payment method.",
  "",
  "Damaged items are replaced free of charge. Send a photo of the damage to support@example.com within 48 hours."
].join("\n")

/** What a lexical-search test uses, with a new agent of the bootstrap tenant; `undefined` where search runs on pgvector. */
const lexicalFixture = Effect.gen(function*() {
  const retrieval = yield* Retrieval
  if (retrieval.mode === "pgvector") return undefined
  const tenantId = yield* bootstrapTenant
  return {
    sql: yield* SqlClient.SqlClient,
    files: yield* KnowledgeFiles,
    queue: yield* IngestionQueue,
    retrieval,
    tenantId,
    agentId: yield* newAgent(tenantId)
  }
})

const officeGuide = [
  "# Office",
  "",
  "The office opens at 8 am and the cafeteria serves lunch from noon to 2 pm. Visitors sign in at the reception desk on the ground floor."
].join("\n")

/** A long text: numbered sentences, each easy to recognise in a chunk. */
const longDocument = Array.from(
  { length: 60 },
  (_, i) => `Fact ${i + 1}: the warehouse in region ${i + 1} stores ${(i + 1) * 10} pallets of spare parts.`
).join(" ")

// ---------------------------------------------------------------------------

describe("Chunking", () => {
  plainIt("cuts a long text into chunks of about 800 characters that overlap", () => {
    const chunks = chunkText(normalizeDocument(longDocument))
    assert.isAbove(chunks.length, 3)
    for (const chunk of chunks) assert.isAtMost(chunk.length, chunkTarget)
    for (let i = 1; i < chunks.length; i++) {
      // The next chunk starts with the last sentence(s) of the previous one.
      const head = chunks[i].slice(0, 40)
      assert.include(chunks[i - 1], head, `chunk ${i} does not start inside chunk ${i - 1}`)
      const shared = chunks[i - 1].slice(chunks[i - 1].indexOf(head))
      assert.isAtMost(shared.length, chunkOverlap)
      assert.isAbove(shared.length, 20)
    }
    // Nothing is lost: every sentence of the document is in some chunk.
    for (let i = 1; i <= 60; i++) {
      assert.isTrue(chunks.some((chunk) => chunk.includes(`Fact ${i}:`)), `fact ${i} missing`)
    }
  })

  plainIt("normalizes line breaks, spaces and blank lines, and summarizes the opening", () => {
    const text = normalizeDocument("\ufeff# Title\r\n\r\n\r\n\r\nFirst  line\tof text.  \r\nSecond line.")
    assert.strictEqual(text, "# Title\n\nFirst line of text.\nSecond line.")
    assert.strictEqual(summarize(text), "Title. First line of text. Second line.")
  })
})

describe("Lexemes", () => {
  plainIt("cuts words as a query is cut: lower-cased runs of letters and digits, accents kept", () => {
    assert.deepStrictEqual(indexWords("Café crème: 12.50 per e-mail, don't"), [
      "café",
      "crème",
      "12",
      "50",
      "per",
      "e",
      "mail",
      "don",
      "t"
    ])
  })

  plainIt("writes each word once with its positions, and skips a word PostgreSQL cannot index", () => {
    assert.strictEqual(tsvectorLiteral("Refund the refund, then REFUND."), "'refund':1,3,5 'the':2 'then':4")
    assert.strictEqual(tsvectorLiteral(" ,. "), "")
    // 683 three-byte characters are 2,049 bytes of UTF-8: over PostgreSQL's 2,047 for a lexeme.
    assert.strictEqual(tsvectorLiteral(`short ${"語".repeat(683)} end`), `'short':1 'end':3`)
    assert.strictEqual(tsvectorLiteral(`${"a".repeat(2047)} b`), `'${"a".repeat(2047)}':1 'b':2`)
  })
})

// ROLE api: no background ingestion worker races the batches these tests run themselves.
layer(Layer.provideMerge(KnowledgeLive, testServer({ ROLE: "api" })), serverSuite)("Knowledge ingestion", (it) => {
  describe("ingest, list, remove", () => {
    it.effect("queues a document as pending and lists it with the spec's fields", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const accepted = yield* files.ingest({ tenantId, agentId, filename: "refunds.md", content: refundPolicy })
        assert.strictEqual(accepted.status, "pending")
        const listed = yield* files.list({ tenantId, agentId })
        assert.strictEqual(listed.length, 1)
        assert.deepInclude(listed[0], {
          id: accepted.file_id,
          filename: "refunds.md",
          status: "pending",
          agent_id: agentId,
          size_bytes: Buffer.byteLength(refundPolicy),
          content_summary: "",
          error: null
        })
        assert.match(listed[0].uploaded_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      }))

    it.effect("answers 404 for an unknown agent or another tenant's agent", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const tenantId = yield* bootstrapTenant
        const otherAgent = yield* newAgent(yield* newTenant)
        for (const agentId of [crypto.randomUUID(), "not-a-uuid", otherAgent]) {
          const error = yield* Effect.flip(files.ingest({ tenantId, agentId, filename: "a.txt", content: "hello" }))
          assert.strictEqual(error._tag, "NotFound")
        }
        const empty = yield* Effect.flip(files.ingest({ tenantId, agentId: otherAgent, filename: "  ", content: "x" }))
        assert.strictEqual(empty._tag, "InvalidRequest")
      }))

    it.effect("removing a file deletes its chunks; another tenant gets 404", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        yield* queue.processDue
        assert.isAbove((yield* chunksOf(file_id)).length, 0)
        const otherTenant = yield* newTenant
        assert.strictEqual(
          (yield* Effect.flip(files.remove({ tenantId: otherTenant, fileId: file_id })))._tag,
          "NotFound"
        )
        yield* files.remove({ tenantId, fileId: file_id })
        assert.strictEqual((yield* chunksOf(file_id)).length, 0)
        assert.deepStrictEqual(yield* files.list({ tenantId, agentId }), [])
        assert.strictEqual((yield* Effect.flip(files.remove({ tenantId, fileId: file_id })))._tag, "NotFound")
      }))

    it.effect("uploads made at once share statements, each answered for itself: its row, a 404, or its own failure", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const otherAgent = yield* newAgent(yield* newTenant)
        /** Upload `i` of a round: most for the agent, some refused (another tenant's agent, another space, none). */
        const upload = (round: number, i: number, broken: boolean) => {
          const target = i % 10 === 3
            ? { agentId: otherAgent }
            : i % 10 === 5
            ? { agentId, spaceId: crypto.randomUUID() }
            : i % 10 === 7
            ? { agentId: crypto.randomUUID() }
            : { agentId }
          return Effect.exit(files.ingest({
            tenantId,
            ...target,
            // PostgreSQL refuses a NUL in text: the statement of the whole batch fails, then each upload alone.
            filename: broken ? `broken\u0000${round}-${i}.md` : `doc-${round}-${i}.md`,
            content: `Document ${round}-${i}: ${"refund shipping ".repeat(i + 1)}`
          }))
        }
        const expected = new Map<string, string>()
        for (const round of [1, 2]) {
          const exits = yield* Effect.all(
            Array.from({ length: 40 }, (_, i) => upload(round, i, round === 1 && i === 20)),
            { concurrency: "unbounded" }
          )
          for (const [i, exit] of exits.entries()) {
            const refused = i % 10 === 3 || i % 10 === 5 || i % 10 === 7
            if (round === 1 && i === 20) {
              assert.isTrue(exit._tag === "Failure", "the upload with a NUL in its name fails on its own")
            } else if (refused) {
              assert.isTrue(exit._tag === "Failure" && String(exit.cause).includes("NotFound"), `upload ${i}`)
            } else {
              assert.isTrue(
                exit._tag === "Success",
                `upload ${round}-${i}: ${exit._tag === "Failure" ? exit.cause : ""}`
              )
              if (exit._tag === "Success") expected.set(exit.value.file_id, `doc-${round}-${i}.md`)
            }
          }
        }
        assert.strictEqual(expected.size, 2 * 40 - 12 - 12 - 1)
        const listed = yield* files.list({ tenantId, agentId })
        // Every accepted upload is its own row, under the id it was answered with; nothing else was written.
        assert.deepStrictEqual(
          new Map(listed.map((file) => [file.id, file.filename])),
          expected
        )
        for (const file of listed) {
          const [round, i] = file.filename.slice(4, -3).split("-").map(Number)
          assert.strictEqual(
            file.size_bytes,
            Buffer.byteLength(`Document ${round}-${i}: ${"refund shipping ".repeat(i + 1)}`)
          )
        }
        assert.deepStrictEqual(yield* files.list({ tenantId: (yield* newTenant), agentId: otherAgent }), [])
        // Out of the queue the next tests work.
        yield* Effect.forEach(listed, (file) => files.remove({ tenantId, fileId: file.id }), { discard: true })
      }))
  })

  describe("the queue", () => {
    it.effect("moves a file pending → processing → ready, chunked with overlap and summarized", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const { file_id } = yield* files.ingest({
          tenantId,
          agentId,
          filename: "warehouses.txt",
          content: longDocument
        })
        assert.strictEqual((yield* statusOf(tenantId, file_id)).status, "pending")

        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        yield* Ref.set(control, { _tag: "held", entered, release })
        const batch = yield* Effect.forkChild(queue.processDue)
        yield* Deferred.await(entered)
        assert.strictEqual((yield* statusOf(tenantId, file_id)).status, "processing")
        yield* Ref.set(control, { _tag: "normal" })
        yield* Deferred.succeed(release, undefined)
        const report = yield* Fiber.join(batch)
        assert.deepStrictEqual(report, { claimed: 1, ready: 1, failed: 0, retried: 0 })

        const file = yield* statusOf(tenantId, file_id)
        assert.strictEqual(file.status, "ready")
        assert.strictEqual(file.error, null)
        assert.match(file.content_summary, /^Fact 1: the warehouse in region 1 stores 10 pallets/)
        const chunks = yield* chunksOf(file_id)
        assert.isAbove(chunks.length, 3)
        assert.deepStrictEqual(chunks.map((c) => c.ordinal), chunks.map((_, i) => i))
        for (const chunk of chunks) assert.deepInclude(chunk, { tenant_id: tenantId, agent_id: agentId })
        for (let i = 1; i < chunks.length; i++) assert.include(chunks[i - 1].content, chunks[i].content.slice(0, 30))
        // A second batch finds nothing left to do.
        assert.strictEqual((yield* queue.processDue).claimed, 0)
      }))

    it.effect("ends a binary or an empty document in failed, with the reason", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const binary = yield* files.ingest({
          tenantId,
          agentId,
          filename: "image.png",
          content: "\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR"
        })
        const blank = yield* files.ingest({ tenantId, agentId, filename: "blank.txt", content: " \n\t\r\n \u0007 " })
        const report = yield* queue.processDue
        assert.strictEqual(report.failed, 2)
        const failedBinary = yield* statusOf(tenantId, binary.file_id)
        assert.strictEqual(failedBinary.status, "failed")
        assert.match(failedBinary.error ?? "", /NUL bytes|binary/)
        const failedBlank = yield* statusOf(tenantId, blank.file_id)
        assert.strictEqual(failedBlank.status, "failed")
        assert.match(failedBlank.error ?? "", /empty/)
        assert.strictEqual((yield* chunksOf(binary.file_id)).length, 0)
      }))

    it.effect("retries an embedding failure, and fails the file once the attempts are used up", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)

        // One failure, then success: ready on the second attempt.
        const flaky = yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        yield* Ref.set(control, { _tag: "failing", times: 1 })
        assert.strictEqual((yield* queue.processDue).retried, 1)
        const retrying = yield* statusOf(tenantId, flaky.file_id)
        assert.strictEqual(retrying.status, "pending")
        assert.match(retrying.error ?? "", /embedding failed: .*the embedding service is down/)
        assert.strictEqual((yield* queue.processDue).ready, 1)
        assert.deepInclude(yield* statusOf(tenantId, flaky.file_id), { status: "ready", error: null })

        // Failing on every attempt (2 here): failed, saying so.
        const doomed = yield* files.ingest({ tenantId, agentId, filename: "shipping.md", content: shippingGuide })
        yield* Ref.set(control, { _tag: "failing", times: 10 })
        yield* queue.processDue
        yield* queue.processDue
        yield* Ref.set(control, { _tag: "normal" })
        const failed = yield* statusOf(tenantId, doomed.file_id)
        assert.strictEqual(failed.status, "failed")
        assert.match(failed.error ?? "", /embedding failed: .*gave up after 2 attempts/)
        assert.strictEqual((yield* queue.processDue).claimed, 0)
      }))

    it.effect("claims a processing file again only once its lease has expired", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* IngestionQueue
        const { file_id, tenantId } = yield* queuedOfficeGuide
        // A worker took it and is still within its lease: nobody else touches it.
        yield* sql`UPDATE knowledge_files SET status = 'processing', attempts = 1, locked_until = now() + interval '1 hour' WHERE id = ${file_id}`
        assert.strictEqual((yield* queue.processDue).claimed, 0)
        // That worker died: the lease runs out and the file is processed.
        yield* sql`UPDATE knowledge_files SET locked_until = now() - interval '1 second' WHERE id = ${file_id}`
        assert.deepStrictEqual(yield* queue.processDue, { claimed: 1, ready: 1, failed: 0, retried: 0 })
        assert.strictEqual((yield* statusOf(tenantId, file_id)).status, "ready")
      }))
    it.effect("stores each chunk's embedding as the model's vector in `real` precision, for every file of a batch", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const retrieval = yield* Retrieval
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const ids: Array<string> = []
        for (const [filename, content] of [["warehouses.txt", longDocument], ["office.md", officeGuide]] as const) {
          ids.push((yield* files.ingest({ tenantId, agentId, filename, content })).file_id)
        }
        assert.deepStrictEqual(yield* queue.processDue, { claimed: 2, ready: 2, failed: 0, retried: 0 })
        for (const [index, content] of [longDocument, officeGuide].entries()) {
          // The vectors of one batch travel in one binary parameter: each chunk gets exactly its own, every
          // element the nearest `real` to the model's number (no decimal rounding on the way).
          const stored = retrieval.mode === "pgvector"
            ? yield* sql<{ content: string; embedding: ReadonlyArray<number> }>`
                SELECT content, embedding_vector::real[] AS embedding FROM knowledge_chunks
                WHERE file_id = ${ids[index]} ORDER BY ordinal`
            : yield* sql<{ content: string; embedding: ReadonlyArray<number> }>`
                SELECT content, embedding FROM knowledge_chunks WHERE file_id = ${ids[index]} ORDER BY ordinal`
          const chunks = chunkText(normalizeDocument(content))
          assert.deepStrictEqual(stored.map((row) => row.content), chunks)
          for (const [ordinal, row] of stored.entries()) {
            const expected = HashingEmbedder.embedText(chunks[ordinal]).map(Math.fround)
            assert.deepStrictEqual([...row.embedding], expected, `chunk ${ordinal} of file ${index}`)
          }
        }
      }))

    it.effect("marking a file ready drops the chunks an earlier attempt left beyond its new count", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* IngestionQueue
        const { agentId, file_id, tenantId } = yield* queuedOfficeGuide
        assert.deepStrictEqual(yield* queue.processDue, { claimed: 1, ready: 1, failed: 0, retried: 0 })
        assert.strictEqual((yield* chunksOf(file_id)).length, 1)
        // Chunks of a longer earlier version (as another model's chunking would leave), then the file queued again.
        yield* sql`
          INSERT INTO knowledge_chunks (file_id, tenant_id, agent_id, ordinal, content, embedding, embedding_model,
                                        embedding_dims)
          SELECT ${file_id}, ${tenantId}, ${agentId}, n, 'stale', '{}', 'old-model', 0 FROM generate_series(1, 3) AS n`
        yield* sql`UPDATE knowledge_files SET status = 'pending', next_attempt_at = now() WHERE id = ${file_id}`
        assert.deepStrictEqual(yield* queue.processDue, { claimed: 1, ready: 1, failed: 0, retried: 0 })
        const chunks = yield* chunksOf(file_id)
        assert.deepStrictEqual(chunks.map((chunk) => chunk.ordinal), [0])
        assert.notStrictEqual(chunks[0].content, "stale")
      }))

    it.effect("writes chunks only for the attempt that holds the file: not a superseded one, not a deleted file", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* KnowledgeRepo
        const files = yield* KnowledgeFiles
        const { file_id, tenantId } = yield* queuedOfficeGuide
        const [first] = yield* repo.claimDue(1, Duration.minutes(1), 32 * 1024)
        assert.strictEqual(first.id, file_id)
        const chunk = (file: typeof first, content: string) => ({ file, ordinal: 0, content, embedding: [1, 0] })
        // The lease ran out and another worker claimed the file: the first attempt's write is dropped.
        yield* sql`UPDATE knowledge_files SET locked_until = now() - interval '1 second' WHERE id = ${file_id}`
        const [second] = yield* repo.claimDue(1, Duration.minutes(1), 32 * 1024)
        assert.strictEqual(second.attempts, first.attempts + 1)
        yield* repo.storeChunks("m", [chunk(first, "superseded")])
        assert.deepStrictEqual(yield* chunksOf(file_id), [])
        yield* repo.storeChunks("m", [chunk(second, "current")])
        assert.deepStrictEqual((yield* chunksOf(file_id)).map((row) => row.content), ["current"])
        // A file deleted while it was processed: nothing is written, and nothing fails.
        yield* files.remove({ tenantId, fileId: file_id })
        yield* repo.storeChunks("m", [chunk(second, "orphan")])
        assert.deepStrictEqual(yield* chunksOf(file_id), [])
        assert.deepStrictEqual(yield* repo.markReady("m", [{ file: second, summary: "", chunkCount: 1 }]), new Set())
      }))

    it.effect("keeps a chunk row whole up to 8160 bytes (its vector or `real[]` embedding in the row), lz4 beyond (lexical)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const retrieval = yield* Retrieval
        const [row] = yield* sql<{ compression: string; lz4: boolean; options: ReadonlyArray<string> | null }>`
          SELECT a.attcompression::text AS compression, c.reloptions AS options,
                 current_setting('server_version_num')::int >= 140000 AND EXISTS (
                   SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)
                 ) AS lz4
          FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
          WHERE c.oid = 'knowledge_chunks'::regclass AND a.attname = 'embedding'`
        // Rows up to 8160 bytes stay whole: the vector (pgvector) or the 2 KiB `real[]` (lexical) is not moved to TOAST.
        assert.deepStrictEqual(row.options, ["toast_tuple_target=8160"])
        if (retrieval.mode === "lexical") assert.strictEqual(row.compression, row.lz4 ? "l" : "")
      }))

    it.effect("deleting an agent, or its tenant, removes its files and their chunks (through the file)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const tenantId = yield* newTenant
        const agentId = yield* newAgent(tenantId)
        const otherAgent = yield* newAgent(tenantId)
        const kept = yield* files.ingest({ tenantId, agentId: otherAgent, filename: "kept.md", content: officeGuide })
        const first = yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        while ((yield* queue.processDue).claimed > 0) {}
        assert.isAbove((yield* chunksOf(first.file_id)).length, 0)
        yield* sql`DELETE FROM agents WHERE tenant_id = ${tenantId} AND id = ${agentId}`
        assert.deepStrictEqual(yield* chunksOf(first.file_id), [])
        assert.isAbove((yield* chunksOf(kept.file_id)).length, 0)
        // A chunk's tenant and agent are its file's: no chunk names a tenant or agent that is gone.
        const [orphans] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM knowledge_chunks c
          WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = c.agent_id AND a.tenant_id = c.tenant_id)`
        assert.strictEqual(orphans.count, 0)
        yield* sql`DELETE FROM tenants WHERE id = ${tenantId}`
        assert.deepStrictEqual(yield* chunksOf(kept.file_id), [])
      }))
  })

  describe("retrieval", () => {
    it.effect("finds the chunk that answers the question, within the tenant and the agents asked for", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const retrieval = yield* Retrieval
        const sql = yield* SqlClient.SqlClient
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const otherAgent = yield* newAgent(tenantId)
        const otherTenant = yield* newTenant
        const foreignAgent = yield* newAgent(otherTenant)
        yield* files.ingest({ tenantId, agentId, filename: "refunds.md", content: refundPolicy })
        yield* files.ingest({ tenantId, agentId, filename: "shipping.md", content: shippingGuide })
        yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        yield* files.ingest({
          tenantId,
          agentId: otherAgent,
          filename: "other-refunds.md",
          content: "Refunds for gift cards are processed within 2 days."
        })
        yield* files.ingest({
          tenantId: otherTenant,
          agentId: foreignAgent,
          filename: "foreign.md",
          content: refundPolicy
        })
        while ((yield* queue.processDue).claimed > 0) {}

        const [{ available }] = yield* sql<{ available: boolean }>`
          SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`
        assert.strictEqual(retrieval.mode, available ? "pgvector" : "lexical")
        // The indexes each strategy searches with.
        const indexes = (yield* sql<{ indexname: string }>`
          SELECT indexname FROM pg_indexes WHERE tablename IN ('knowledge_chunks', 'knowledge_words')`).map((row) =>
          row.indexname
        )
        // pgvector ranks by an exact scan of the agents' chunks: no index is maintained per chunk for it. Lexical
        // search finds typos through the agents' vocabularies: no trigram index over every chunk's text either.
        const lexicalIndexes = ["knowledge_chunks_tsv_idx", "knowledge_words_trgm_idx"]
        if (available) {
          for (const index of [...lexicalIndexes, "knowledge_chunks_vector_512_idx"]) assert.notInclude(indexes, index)
        } else {
          assert.includeMembers(indexes, lexicalIndexes)
        }
        assert.notInclude(indexes, "knowledge_chunks_trgm_idx")

        const refunds = yield* retrieval.search({
          tenantId,
          agentIds: [agentId],
          query: "How long do refunds take to be processed?"
        })
        assert.isAbove(refunds.length, 0)
        assert.strictEqual(refunds[0].filename, "refunds.md")
        assert.include(refunds[0].content, "within 14 business days")
        for (const chunk of refunds) assert.strictEqual(chunk.agentId, agentId)

        const shipping = yield* retrieval.search({
          tenantId,
          agentIds: [agentId],
          query: "when does express shipping arrive"
        })
        assert.strictEqual(shipping[0].filename, "shipping.md")

        // Several agents at once (routing): the best chunk says whose it is.
        const both = yield* retrieval.search({ tenantId, agentIds: [agentId, otherAgent], query: "gift card refunds" })
        assert.strictEqual(both[0].agentId, otherAgent)

        // Never another tenant's chunks, even for that tenant's agent id.
        assert.deepStrictEqual(
          yield* retrieval.search({ tenantId, agentIds: [foreignAgent], query: "refunds processed" }),
          []
        )
        const foreign = yield* retrieval.search({
          tenantId: otherTenant,
          agentIds: [foreignAgent],
          query: "refunds processed"
        })
        assert.isTrue(foreign.every((chunk) => chunk.filename === "foreign.md"))
        assert.isAbove(foreign.length, 0)
      }))

    it.effect("matches a misspelt word through trigram similarity where pgvector is absent", () =>
      Effect.gen(function*() {
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const retrieval = yield* Retrieval
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        yield* files.ingest({ tenantId, agentId, filename: "shipping.md", content: shippingGuide })
        yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        while ((yield* queue.processDue).claimed > 0) {}
        // One right word among misspelt ones is enough on both databases.
        const partly = yield* retrieval.search({
          tenantId,
          agentIds: [agentId],
          query: "internationall parcels customs"
        })
        assert.strictEqual(partly[0].filename, "shipping.md")
        const typo = yield* retrieval.search({ tenantId, agentIds: [agentId], query: "cafeterria" })
        if (retrieval.mode === "lexical") {
          assert.deepStrictEqual(typo.map((chunk) => chunk.filename), ["office.md"])
        } else {
          // Nearest neighbours: always some chunk of this agent, however unrelated the query.
          assert.isTrue(typo.length > 0 && typo.every((chunk) => chunk.agentId === agentId))
        }
      }))

    it.effect("finds a misspelt word through the agent's vocabulary: never a deleted file's chunks, never another agent's", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const files = yield* KnowledgeFiles
        const queue = yield* IngestionQueue
        const retrieval = yield* Retrieval
        const tenantId = yield* bootstrapTenant
        const agentId = yield* newAgent(tenantId)
        const otherAgent = yield* newAgent(tenantId)
        const office = yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        // A URL with a quote: the lexeme `/o'reilly-handbook`, which the query's `reill` is similar to.
        const handbook = "Read the handbook at http://example.com/o'reilly-handbook or in the manuals on the share."
        yield* files.ingest({ tenantId, agentId: otherAgent, filename: "handbook.md", content: handbook })
        while ((yield* queue.processDue).claimed > 0) {}
        if (retrieval.mode === "pgvector") {
          // The embedded database ranks by vector: no vocabulary is kept.
          const [{ exists }] = yield* sql<
            { exists: boolean }
          >`SELECT to_regclass('knowledge_words') IS NOT NULL AS exists`
          assert.isFalse(exists)
          return
        }
        const words = (yield* sql<{ word: string }>`
          SELECT word FROM knowledge_words WHERE tenant_id = ${tenantId} AND agent_id = ${agentId}`).map((row) =>
          row.word
        )
        assert.includeMembers(words, ["office", "cafeteria", "reception"])
        assert.notInclude(words, "handbook")
        // The other agent's words are not this agent's, and quoted words match as written.
        assert.deepStrictEqual(yield* retrieval.search({ tenantId, agentIds: [agentId], query: "handbok reilly" }), [])
        const quoted = yield* retrieval.search({ tenantId, agentIds: [otherAgent], query: "reilly manuals" })
        assert.deepStrictEqual(quoted.map((chunk) => chunk.filename), ["handbook.md"])
        // Deleted: its words may stay in the vocabulary, its chunks are never returned.
        yield* files.remove({ tenantId, fileId: office.file_id })
        assert.deepStrictEqual(yield* retrieval.search({ tenantId, agentIds: [agentId], query: "cafeterria" }), [])
      }))

    it.effect("stores a chunk's lexemes as search cuts a query (lexical): the words of its text, found by each", () =>
      Effect.gen(function*() {
        const fixture = yield* lexicalFixture
        if (fixture === undefined) return
        const { agentId, files, queue, retrieval, sql, tenantId } = fixture
        // Accents composed and decomposed, CJK without spaces, an emoji, and a word too long to index (2,100 bytes).
        const content =
          `Crème brûlée costs 12.50 at the e-mail café. Refunds take 5 days; don't wait. 東京の配送は翌日です 📦 ` +
          `Cafe\u0301 ${"語".repeat(700)} end.`
        yield* files.ingest({ tenantId, agentId, filename: "menu.md", content })
        while ((yield* queue.processDue).claimed > 0) {}
        const rows = yield* sql<{ content: string; lexemes: ReadonlyArray<string> }>`
          SELECT c.content, tsvector_to_array(c.content_tsv) AS lexemes
          FROM knowledge_chunks c JOIN knowledge_files f ON f.id = c.file_id
          WHERE f.agent_id = ${agentId}`
        assert.isAbove(rows.length, 0)
        for (const row of rows) {
          // Every word of the chunk but the one over PostgreSQL's 2,047 bytes for a lexeme.
          assert.sameMembers(
            [...row.lexemes],
            [...new Set(indexWords(row.content))].filter((word) => Buffer.byteLength(word) <= 2047)
          )
          assert.notInclude([...row.lexemes], "語".repeat(700))
        }
        for (
          const query of ["crème brûlée", "café", "Cafe\u0301", "12.50", "refund", "e-mail", "東京の配送は翌日です"]
        ) {
          const found = yield* retrieval.search({ tenantId, agentIds: [agentId], query })
          assert.deepStrictEqual([...new Set(found.map((chunk) => chunk.filename))], ["menu.md"], query)
        }
      }))

    it.effect("two workers adding the same new words to an agent's vocabulary at once both finish (no deadlock)", () =>
      Effect.gen(function*() {
        const fixture = yield* lexicalFixture
        if (fixture === undefined) return
        const { agentId, files, sql, tenantId } = fixture
        const repo = yield* KnowledgeRepo
        const ids = new Set<string>()
        for (const filename of ["a.md", "b.md"]) {
          ids.add((yield* files.ingest({ tenantId, agentId, filename, content: "placeholder" })).file_id)
        }
        const claimed = (yield* repo.claimDue(64, Duration.minutes(1), 32 * 1024)).filter((file) => ids.has(file.id))
        assert.strictEqual(claimed.length, 2)
        for (let round = 0; round < 5; round++) {
          // 400 words new to the agent, written by the two files' chunks in opposite orders, at the same time.
          const words = Array.from({ length: 400 }, (_, i) => `r${round}w${i}`)
          const chunksOf = (file: (typeof claimed)[number], ordered: ReadonlyArray<string>) =>
            Array.from({ length: 8 }, (_, ordinal) => ({
              file,
              ordinal,
              content: ordered.slice(ordinal * 50, ordinal * 50 + 50).join(" "),
              embedding: [1, 0]
            }))
          yield* Effect.all([
            repo.storeChunks("m", chunksOf(claimed[0], words)),
            repo.storeChunks("m", chunksOf(claimed[1], [...words].reverse()))
          ], { concurrency: 2 })
          const [{ count }] = yield* sql<{ count: number }>`
            SELECT count(*)::int AS count FROM knowledge_words WHERE agent_id = ${agentId} AND word LIKE ${`r${round}w%`}`
          assert.strictEqual(count, words.length)
        }
      }))

    it.effect("a chunk written without lexemes (a replica of the previous build) gets PostgreSQL's own", () =>
      Effect.gen(function*() {
        const fixture = yield* lexicalFixture
        if (fixture === undefined) return
        const { agentId, files, sql, tenantId } = fixture
        // The migration runs again on a migrated database: the column stays a plain one, the triggers stay.
        yield* knowledgeChunkLexemes
        const [column] = yield* sql<{ is_generated: string }>`
          SELECT is_generated FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'content_tsv'`
        assert.strictEqual(column.is_generated, "NEVER")
        const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "old.md", content: "Old build." })
        // What the previous build wrote: no lexemes (the column was generated then).
        yield* sql`
          INSERT INTO knowledge_chunks (file_id, tenant_id, agent_id, ordinal, content, embedding, embedding_model,
                                        embedding_dims)
          VALUES (${file_id}, ${tenantId}, ${agentId}, 0, 'Parcels leave the Warehouse daily', '{1}', 'm', 1)`
        const lexemes = sql<{ same: boolean; words: ReadonlyArray<string> }>`
          SELECT content_tsv = to_tsvector('simple', content) AS same, tsvector_to_array(content_tsv) AS words
          FROM knowledge_chunks WHERE file_id = ${file_id}`
        const [inserted] = yield* lexemes
        assert.isTrue(inserted.same)
        assert.include([...inserted.words], "warehouse")
        // A new text without new lexemes gets them again; a write that brings its own keeps them.
        yield* sql`UPDATE knowledge_chunks SET content = 'Couriers collect at noon' WHERE file_id = ${file_id}`
        const [updated] = yield* lexemes
        assert.isTrue(updated.same)
        assert.include([...updated.words], "couriers")
        yield* sql`
          UPDATE knowledge_chunks SET content = 'Vans only', content_tsv = ${tsvectorLiteral("Vans only")}::tsvector
          WHERE file_id = ${file_id}`
        const [own] = yield* lexemes
        assert.sameMembers([...own.words], ["vans", "only"])
      }))

    it.effect("an existing database gets its agents' vocabularies from the chunks stored, and loses the chunk trigram index", () =>
      Effect.gen(function*() {
        const fixture = yield* lexicalFixture
        if (fixture === undefined) return
        const { agentId, files, queue, retrieval, sql, tenantId } = fixture
        yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
        while ((yield* queue.processDue).claimed > 0) {}
        // The state before migration 0021: chunks, no vocabulary, a trigram index over every chunk's text.
        yield* sql`DELETE FROM knowledge_words WHERE agent_id = ${agentId}`
        yield* sql`CREATE INDEX knowledge_chunks_trgm_idx ON knowledge_chunks USING gin (content gin_trgm_ops)`
        assert.deepStrictEqual(yield* retrieval.search({ tenantId, agentIds: [agentId], query: "cafeterria" }), [])
        yield* knowledgeVocabulary
        const typo = yield* retrieval.search({ tenantId, agentIds: [agentId], query: "cafeterria" })
        assert.deepStrictEqual(typo.map((chunk) => chunk.filename), ["office.md"])
        const indexes = (yield* sql<{ indexname: string }>`
          SELECT indexname FROM pg_indexes WHERE tablename = 'knowledge_chunks'`).map((row) => row.indexname)
        assert.notInclude(indexes, "knowledge_chunks_trgm_idx")
      }))
  })
})

layer(
  Layer.provideMerge(
    IngestionWorker.layer.pipe(
      Layer.provideMerge(KnowledgeLive),
      Layer.provideMerge(Notifications.layer),
      Layer.provide(ServerConfig.layer)
    ),
    testServer()
  ),
  serverSuite
)("The ingestion worker", (it) => {
  it.effect("processes a new upload in the background, woken up by the ingest", () =>
    Effect.gen(function*() {
      const files = yield* KnowledgeFiles
      const tenantId = yield* bootstrapTenant
      const agentId = yield* newAgent(tenantId)
      const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "office.md", content: officeGuide })
      let status = (yield* statusOf(tenantId, file_id)).status
      while (status !== "ready" && status !== "failed") {
        yield* Effect.sleep("50 millis")
        status = (yield* statusOf(tenantId, file_id)).status
      }
      assert.strictEqual(status, "ready")
    }))

  it.effect("a long text is read from the database a section at a time, to exactly the chunks of the whole", () =>
    Effect.gen(function*() {
      const files = yield* KnowledgeFiles
      const tenantId = yield* bootstrapTenant
      const agentId = yield* newAgent(tenantId)
      // Several sections of multi-byte text (accents, CJK, an emoji): PostgreSQL counts characters, not bytes.
      let content = ""
      for (let i = 0; content.length < 3.5 * sectionSize; i++) {
        content += `Paragraphe ${i} : l'entrepôt de la région ${i % 13} expédie des colis 東京 🚚 avant midi.\n\n`
      }
      const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "long.md", content })
      // The background worker of this suite processes it.
      let status = (yield* statusOf(tenantId, file_id)).status
      while (status !== "ready" && status !== "failed") {
        yield* Effect.sleep("50 millis")
        status = (yield* statusOf(tenantId, file_id)).status
      }
      assert.strictEqual(status, "ready")
      const expected = sectionsOf(content).flatMap((section) => chunkText(normalizeDocument(section)))
      const stored = (yield* chunksOf(file_id)).map((chunk) => chunk.content)
      assert.strictEqual(stored.length, expected.length)
      assert.deepStrictEqual(stored, expected)
    }))
})

describe("Sections", () => {
  plainIt(
    "a long document is cut at paragraph breaks into sections of at most sectionSize characters, losing nothing",
    () => {
      const paragraph = "Sentence one of a paragraph. Sentence two of it.\n\n"
      const document = paragraph.repeat(Math.ceil((3.5 * sectionSize) / paragraph.length))
      const sections = sectionsOf(document)
      assert.isAtLeast(sections.length, 4)
      assert.strictEqual(sections.join(""), document)
      for (const section of sections) {
        assert.isAtMost(section.length, sectionSize)
        assert.isTrue(section.endsWith("\n\n") || section === sections.at(-1))
      }
      assert.deepStrictEqual(sectionsOf("short text"), ["short text"])
    }
  )

  plainIt("the default lease is seconds, not minutes: a killed worker's files are taken over soon", () => {
    assert.isAtMost(Duration.toMillis(Duration.fromInputUnsafe(defaultOptions.lease)), 30_000)
  })
})

layer(
  Layer.provideMerge(
    Layer.mergeAll(KnowledgeFiles.layer, IngestionQueue.layerWith({ lease: "1500 millis", maxAttempts: 2 })).pipe(
      Layer.provideMerge(KnowledgeRepo.layer),
      Layer.provideMerge(SearchCapabilities.layer),
      Layer.provideMerge(ControlledEmbedder)
    ),
    testServer({ ROLE: "api" })
  ),
  serverSuite
)("Ingestion leases", (it) => {
  it.effect("a heartbeat keeps a file that takes longer than its lease from being claimed twice", () =>
    Effect.gen(function*() {
      const files = yield* KnowledgeFiles
      const queue = yield* IngestionQueue
      const tenantId = yield* bootstrapTenant
      const agentId = yield* newAgent(tenantId)
      const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "slow.md", content: officeGuide })
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      yield* Ref.set(control, { _tag: "held", entered, release })
      const slow = yield* Effect.forkChild(queue.processDue)
      yield* Deferred.await(entered)
      // Twice the lease: without the heartbeat another batch would take the file over.
      for (let i = 0; i < 6; i++) {
        yield* Effect.sleep("500 millis")
        assert.strictEqual((yield* queue.processDue).claimed, 0, `claimed again after ${(i + 1) * 500} ms`)
      }
      yield* Ref.set(control, { _tag: "normal" })
      yield* Deferred.succeed(release, undefined)
      assert.deepStrictEqual(yield* Fiber.join(slow), { claimed: 1, ready: 1, failed: 0, retried: 0 })
      assert.strictEqual((yield* statusOf(tenantId, file_id)).status, "ready")
    }))

  it.effect("a file whose worker died (no heartbeat) is taken over once its short lease runs out", () =>
    Effect.gen(function*() {
      const files = yield* KnowledgeFiles
      const queue = yield* IngestionQueue
      const repo = yield* KnowledgeRepo
      const tenantId = yield* bootstrapTenant
      const agentId = yield* newAgent(tenantId)
      const { file_id } = yield* files.ingest({ tenantId, agentId, filename: "orphan.md", content: refundPolicy })
      // The worker that is killed: it claims with the lease and never renews it.
      const [orphan] = yield* repo.claimDue(8, Duration.millis(1500), sectionSize)
      assert.strictEqual(orphan.id, file_id)
      assert.strictEqual((yield* queue.processDue).claimed, 0)
      const deadline = Date.now() + 15_000
      let report = yield* queue.processDue
      while (report.claimed === 0 && Date.now() < deadline) {
        yield* Effect.sleep("200 millis")
        report = yield* queue.processDue
      }
      assert.deepStrictEqual(report, { claimed: 1, ready: 1, failed: 0, retried: 0 })
      // The dead attempt can no longer write: its chunks are refused, its completion ignored.
      yield* repo.storeChunks("other-model", [{ file: orphan, ordinal: 0, content: "stale", embedding: [1, 0] }])
      assert.deepStrictEqual([
        ...(yield* repo.markReady("other-model", [{ file: orphan, summary: "stale", chunkCount: 1 }]))
      ], [])
      const chunks = yield* chunksOf(file_id)
      assert.isFalse(chunks.some((chunk) => chunk.content === "stale"))
      assert.isAbove(chunks.length, 0)
    }))
})

/** A 2 MiB document of numbered paragraphs. */
const twoMiB = (() => {
  let text = ""
  for (let i = 0; text.length < 2 * 1024 * 1024 - 200; i++) {
    text += `Paragraph ${i}: the warehouse in region ${
      i % 97
    } ships ${i} parcels a day to customers who ordered before noon.\n\n`
  }
  return text.slice(0, 2 * 1024 * 1024)
})()

layer(testServer({ CRON_INTERVAL_MS: "300" }), serverSuite)("Ingesting 2 MiB while the API serves", (it) => {
  it.effect(
    "the document becomes ready with every section chunked, and GET /health answers ok throughout",
    () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const space = yield* admin.api.admin.createSpace({ payload: { code: "big", name: "Big" } })
        const agent = yield* admin.api.agentsAdmin.create({
          payload: { space_id: space.id, name: "Archivist", summary: "", is_primary: true }
        })
        const { key } = yield* createKey(["files"], { space_id: space.id })
        const accepted = yield* http(
          "/v1/knowledge/ingest",
          json("POST", { agent_id: agent.id, filename: "big.md", content: twoMiB }, bearer(key))
        )
        assert.strictEqual(accepted.status, 201)
        const fileId = accepted.body.file_id as string
        const health: Array<{ readonly status: number; readonly body: any }> = []
        const deadline = Date.now() + 170_000
        let file: any
        for (;;) {
          health.push(yield* http("/health"))
          const listed = yield* http(`/v1/knowledge?agent_id=${agent.id}`, { headers: bearer(key) })
          file = listed.body.files.find((f: any) => f.id === fileId)
          if (file.status === "ready" || file.status === "failed" || Date.now() > deadline) break
          yield* Effect.sleep("50 millis")
        }
        assert.strictEqual(file.status, "ready", JSON.stringify(file))
        // The database and the key-value store answered every probe in time (each has a 2 s timeout).
        assert.deepStrictEqual(health.filter((h) => h.status !== 200 || h.body.status !== "ok"), [])
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ chunk_count: number; chunks: number; last: string }>`
        SELECT f.chunk_count, (SELECT count(*)::int FROM knowledge_chunks c WHERE c.file_id = f.id) AS chunks,
               (SELECT content FROM knowledge_chunks c WHERE c.file_id = f.id ORDER BY ordinal DESC LIMIT 1) AS last
        FROM knowledge_files f WHERE f.id = ${fileId}`
        assert.isAbove(row.chunk_count, 2000)
        assert.strictEqual(row.chunks, row.chunk_count)
        // Read a section at a time, it is exactly the chunks of the whole text.
        const expected = sectionsOf(twoMiB).flatMap((section) => chunkText(normalizeDocument(section)))
        assert.strictEqual(row.chunk_count, expected.length)
        // Nothing lost at the end: the last paragraph is in the last chunk.
        const lastParagraph = twoMiB.trimEnd().split("\n\n").at(-1)!.slice(0, 40)
        assert.include(row.last, lastParagraph.slice(0, 20))
      }),
    { timeout: 180_000 }
  )

  it.effect(
    "2 MiB of multi-byte text is stored in parts and comes back byte-identical, to exactly the chunks of the whole",
    () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const space = yield* admin.api.admin.createSpace({ payload: { code: "utf8", name: "Multi-byte" } })
        const agent = yield* admin.api.agentsAdmin.create({
          payload: { space_id: space.id, name: "Translator", summary: "", is_primary: true }
        })
        const { key } = yield* createKey(["files"], { space_id: space.id })
        // An emoji (a surrogate pair) across the first part boundary, then accents, CJK and emoji up to 2 MiB.
        let content = `${"a".repeat(partSize - 1)}🚚\n\n`
        let bytes = Buffer.byteLength(content)
        for (let i = 0;; i++) {
          const paragraph = `Absatz ${i}: Größe der Sendung ${i % 31} — 東京の倉庫 🚚📦 liefert vor Mittag.\n\n`
          const size = Buffer.byteLength(paragraph)
          if (bytes + size > 2 * 1024 * 1024) break
          content += paragraph
          bytes += size
        }
        const accepted = yield* http(
          "/v1/knowledge/ingest",
          json("POST", { agent_id: agent.id, filename: "utf8.md", content }, bearer(key))
        )
        assert.strictEqual(accepted.status, 201, JSON.stringify(accepted.body))
        const fileId = accepted.body.file_id as string
        const deadline = Date.now() + 170_000
        let file: any
        for (;;) {
          const listed = yield* http(`/v1/knowledge?agent_id=${agent.id}`, { headers: bearer(key) })
          file = listed.body.files.find((f: any) => f.id === fileId)
          if (file.status === "ready" || file.status === "failed" || Date.now() > deadline) break
          yield* Effect.sleep("100 millis")
        }
        assert.strictEqual(file.status, "ready", JSON.stringify(file))
        assert.strictEqual(file.size_bytes, bytes)
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ parts: number; text: string; inline: string }>`
          SELECT count(*)::int AS parts, string_agg(p.content, '' ORDER BY p.part) AS text,
                 (SELECT content FROM knowledge_files WHERE id = ${fileId}) AS inline
          FROM knowledge_file_parts p WHERE p.file_id = ${fileId}`
        assert.isAbove(stored.parts, 1)
        assert.strictEqual(stored.inline, "")
        assert.isTrue(Buffer.from(stored.text).equals(Buffer.from(content)), "the stored text differs from the upload")
        const expected = sectionsOf(content).flatMap((section) => chunkText(normalizeDocument(section)))
        const chunks = (yield* chunksOf(fileId)).map((chunk) => chunk.content)
        assert.strictEqual(chunks.length, expected.length)
        assert.deepStrictEqual(chunks, expected)
      }),
    { timeout: 180_000 }
  )
})
