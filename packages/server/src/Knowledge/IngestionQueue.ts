/**
 * The ingestion queue's work, one batch per `processDue`: claim due files
 * (`FOR UPDATE SKIP LOCKED`, so any number of job processes share the queue),
 * then for each one normalize, chunk, embed and store the chunks, and mark it
 * `ready` — or `failed` with the reason when the document cannot be processed
 * (binary, empty) or embedding still fails after `maxAttempts`. A transient
 * failure puts the file back to `pending` with a growing delay. A file whose
 * worker died stays `processing` until its lease (`locked_until`) expires and
 * is then claimed again. Embedding runs outside any transaction; storing the
 * chunks and the `ready` mark is one short transaction that only the attempt
 * holding the lease can commit.
 */
import { Context, Duration, Effect, Layer } from "effect"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import type { SqlError } from "effect/sql/SqlError"
import { ModelNames } from "../Ai/ModelNames.ts"
import { chunkText, normalizeDocument, summarize, UnprocessableDocument } from "./Chunking.ts"
import { type ClaimedFile, KnowledgeRepo } from "./KnowledgeRepo.ts"
import { SearchCapabilities } from "./SearchCapabilities.ts"

export interface IngestionOptions {
  /** Files claimed per batch. */
  readonly batchSize: number
  /** How long a claimed file stays invisible to other workers (the visibility timeout). */
  readonly lease: Duration.Input
  /** Attempts before a file that keeps failing is marked failed. */
  readonly maxAttempts: number
  /** The delay before attempt `attempt + 1` after a transient failure of attempt `attempt`. */
  readonly retryDelay: (attempt: number) => Duration.Duration
}

export const defaultOptions: IngestionOptions = {
  batchSize: 8,
  lease: "5 minutes",
  maxAttempts: 3,
  retryDelay: (attempt) => Duration.seconds(30 * 2 ** (attempt - 1))
}

/** What one batch did. */
export interface IngestionReport {
  readonly claimed: number
  readonly ready: number
  readonly failed: number
  readonly retried: number
}

const embedBatchSize = 32

type Outcome = "ready" | "failed" | "retried" | "lost"

export class IngestionQueue extends Context.Service<IngestionQueue, {
  /** Processes one batch of due files; an empty report when nothing is due. */
  readonly processDue: Effect.Effect<IngestionReport, SqlError>
}>()("@agent-platform/server/Knowledge/IngestionQueue") {
  /** With the default options: batches of 8, 5-minute lease, 3 attempts, retries after 30 s, 60 s. */
  static readonly layer = Layer.effect(IngestionQueue, Effect.suspend(() => make(defaultOptions)))
  static readonly layerWith = (options: Partial<IngestionOptions>) =>
    Layer.effect(IngestionQueue, Effect.suspend(() => make({ ...defaultOptions, ...options })))
}

const make = Effect.fnUntraced(function*(options: IngestionOptions) {
  const repo = yield* KnowledgeRepo
  const embedder = yield* EmbeddingModel.EmbeddingModel
  const capabilities = yield* SearchCapabilities
  const model = (yield* ModelNames).embeddingModel
  const lease = Duration.fromInputUnsafe(options.lease)

  const embedAll = Effect.fnUntraced(function*(chunks: ReadonlyArray<string>) {
    const vectors: Array<ReadonlyArray<number>> = []
    for (let from = 0; from < chunks.length; from += embedBatchSize) {
      const response = yield* embedder.embedMany(chunks.slice(from, from + embedBatchSize))
      vectors.push(...response.embeddings.map((embedding) => embedding.vector))
    }
    return vectors
  })

  const failOrRetry = (file: ClaimedFile, reason: string): Effect.Effect<Outcome, SqlError> =>
    file.attempts >= options.maxAttempts
      ? Effect.as(repo.fail(file, `${reason} (gave up after ${file.attempts} attempts)`), "failed" as const)
      : Effect.as(repo.retryLater(file, reason, options.retryDelay(file.attempts)), "retried" as const)

  const processFile = (file: ClaimedFile): Effect.Effect<Outcome, SqlError> =>
    Effect.gen(function*() {
      if (file.attempts > options.maxAttempts) {
        yield* repo.fail(file, `processing stopped ${options.maxAttempts} times without finishing (gave up)`)
        return "failed" as const
      }
      if (file.content_problem !== null) {
        yield* repo.fail(file, file.content_problem)
        return "failed" as const
      }
      let text: string
      try {
        text = normalizeDocument(file.content)
      } catch (error) {
        if (!(error instanceof UnprocessableDocument)) throw error
        yield* repo.fail(file, error.message)
        return "failed" as const
      }
      const chunks = chunkText(text)
      const embedded = yield* Effect.result(embedAll(chunks))
      if (embedded._tag === "Failure") return yield* failOrRetry(file, `embedding failed: ${embedded.failure.message}`)
      const vectors = embedded.success
      const dimensions = vectors[0]?.length ?? 0
      if (dimensions === 0 || vectors.some((vector) => vector.length !== dimensions || vector.some((x) => !Number.isFinite(x)))) {
        return yield* failOrRetry(file, "embedding failed: the embedding model returned empty, uneven or non-finite vectors")
      }
      yield* capabilities.ensureVectorIndex(dimensions)
      const stored = yield* repo.complete(file, {
        summary: summarize(text),
        model,
        chunks: chunks.map((content, i) => ({ content, embedding: vectors[i] }))
      })
      return stored ? "ready" as const : "lost" as const
    }).pipe(Effect.annotateLogs({ knowledgeFile: file.id, attempt: file.attempts }))

  // The embedding model is fixed for the life of the process: re-queueing other models' files is a start-up matter.
  let requeued = false
  const processDue = Effect.gen(function*() {
    if (!requeued) {
      const count = yield* repo.requeueOtherModels(model)
      if (count > 0) yield* Effect.logInfo(`re-queued ${count} knowledge file(s) embedded by another model than ${model}`)
      requeued = true
    }
    const claimed = yield* repo.claimDue(options.batchSize, lease)
    const report = { claimed: claimed.length, ready: 0, failed: 0, retried: 0 }
    for (const file of claimed) {
      const outcome = yield* processFile(file)
      if (outcome !== "lost") report[outcome]++
      if (outcome === "failed") yield* Effect.logWarning(`knowledge file ${file.id} (${file.filename}) failed to ingest`)
    }
    return report satisfies IngestionReport
  }).pipe(Effect.withSpan("IngestionQueue.processDue"))

  return IngestionQueue.of({ processDue })
})
