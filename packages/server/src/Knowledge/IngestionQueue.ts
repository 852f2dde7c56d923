/**
 * The ingestion queue's work, one batch per `processDue`: claim due files
 * (`FOR UPDATE SKIP LOCKED`, so any number of job processes share the queue),
 * then normalize, chunk and embed them, store their chunks and mark them
 * `ready` — or `failed` with the reason when a document cannot be processed
 * (binary, empty) or embedding still fails after `maxAttempts`. A transient
 * failure puts the file back to `pending` with a growing delay.
 *
 * Batched: the chunks of every file of the batch are embedded together
 * (`embedMany` calls of `embedBatchSize`) and written in multi-row INSERTs of
 * a bounded size across files (their vectors in one binary parameter); the
 * files are marked ready in one statement. Only the attempt holding a file's
 * lease writes its chunks, and they stay out of search until the file is `ready`.
 *
 * Cooperative: the work is cut into slices — a document is chunked section by
 * section (cut at paragraph breaks every `sectionSize` characters), embedded
 * `embedBatchSize` chunks at a time, written `writeBatchSize` chunks per
 * statement — and the worker yields to the event loop between slices, so
 * requests served by the same process (the embedded database runs inside it)
 * never wait long behind a large document.
 *
 * Leases: a claimed file is leased for `lease` (15 s) and a heartbeat renews
 * the lease of the batch every `lease / 3` while it is worked on; when the
 * worker dies (`kill -9`), its files are claimed again within seconds.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import type { SqlError } from "effect/sql/SqlError"
import { ModelNames } from "../Ai/ModelNames.ts"
import { DatabaseMode } from "../Platform/Database.ts"
import { chunkText, normalizeDocument, summarize, UnprocessableDocument } from "./Chunking.ts"
import { type ClaimedFile, codePoints, type FileChunk, KnowledgeRepo } from "./KnowledgeRepo.ts"

export interface IngestionOptions {
  /** Files claimed per batch. */
  readonly batchSize: number
  /** How long a claim holds without a heartbeat (the visibility timeout); renewed every third of it. */
  readonly lease: Duration.Input
  /** Attempts before a file that keeps failing is marked failed. */
  readonly maxAttempts: number
  /** The delay before attempt `attempt + 1` after a transient failure of attempt `attempt`. */
  readonly retryDelay: (attempt: number) => Duration.Duration
}

export const defaultOptions: IngestionOptions = {
  batchSize: 32,
  lease: "15 seconds",
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

/** Chunks per `embedMany` call. */
const embedBatchSize = 64
/**
 * Chunks per INSERT. The embedded database runs each statement on the event
 * loop; without per-chunk search indexes there (migration 0017) a chunk costs
 * it well under a millisecond, so a statement of 16 keeps every request's wait short.
 */
const writeBatchSize = { postgres: 200, embedded: 16 } as const
/** Characters of a document chunked in one go. */
export const sectionSize = 32 * 1024

/** Lets the event loop run what waits (requests, timers) before the next slice of work. */
const yieldToEventLoop = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/**
 * Where the section that starts a longer text ends in `window` (its first
 * `sectionSize` characters): after the last paragraph break (a blank line), or
 * line break, in its second half, or at its end (before a surrogate pair's first half there).
 */
const sectionCut = (window: string): number => {
  const paragraph = window.lastIndexOf("\n\n")
  const line = window.lastIndexOf("\n")
  if (paragraph > sectionSize / 2) return paragraph + 2
  if (line > sectionSize / 2) return line + 1
  // Never between the two halves of a surrogate pair (an emoji): the pair goes to the next section.
  const last = window.charCodeAt(window.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? window.length - 1 : window.length
}

/**
 * The document cut into sections of about `sectionSize` characters at
 * paragraph breaks (a blank line), or at line breaks, or anywhere when a
 * paragraph is longer; a document up to `sectionSize` is one section.
 */
export const sectionsOf = (content: string): Array<string> => {
  const sections: Array<string> = []
  let from = 0
  while (content.length - from > sectionSize) {
    const cut = sectionCut(content.slice(from, from + sectionSize))
    sections.push(content.slice(from, from + cut))
    from += cut
  }
  sections.push(content.slice(from))
  return sections
}

/** Bytes of a file's text claimed with it; a longer text is read a section at a time. */
const inlineContentBytes = sectionSize

/** A file's text prepared for embedding: its summary and chunks, or why it cannot be processed. */
type Prepared =
  | {
    readonly _tag: "Chunked"
    readonly file: ClaimedFile
    readonly summary: string
    readonly chunks: ReadonlyArray<string>
  }
  | { readonly _tag: "Unprocessable"; readonly file: ClaimedFile; readonly reason: string }

type Outcome = "ready" | "failed" | "retried" | "lost"

export class IngestionQueue extends Context.Service<IngestionQueue, {
  /** Processes one batch of due files; an empty report when nothing is due. */
  readonly processDue: Effect.Effect<IngestionReport, SqlError>
}>()("@agent-platform/server/Knowledge/IngestionQueue") {
  /** With the default options: batches of 32, 15-second lease with a heartbeat, 3 attempts, retries after 30 s, 60 s. */
  static readonly layer = Layer.effect(IngestionQueue, Effect.suspend(() => make(defaultOptions)))
  static readonly layerWith = (options: Partial<IngestionOptions>) =>
    Layer.effect(IngestionQueue, Effect.suspend(() => make({ ...defaultOptions, ...options })))
}

const make = Effect.fnUntraced(function*(options: IngestionOptions) {
  const repo = yield* KnowledgeRepo
  const embedder = yield* EmbeddingModel.EmbeddingModel
  const model = (yield* ModelNames).embeddingModel
  const lease = Duration.fromInputUnsafe(options.lease)
  const heartbeat = Duration.divideUnsafe(lease, 3)
  const mode = yield* Effect.serviceOption(DatabaseMode)
  const chunksPerWrite = writeBatchSize[Option.isSome(mode) ? mode.value.kind : "embedded"]

  const failOrRetry = (file: ClaimedFile, reason: string): Effect.Effect<Outcome, SqlError> =>
    file.attempts >= options.maxAttempts
      ? Effect.as(repo.fail(file, `${reason} (gave up after ${file.attempts} attempts)`), "failed" as const)
      : Effect.as(repo.retryLater(file, reason, options.retryDelay(file.attempts)), "retried" as const)

  /** Normalizes and chunks a file section by section, yielding between sections. */
  const prepare = (file: ClaimedFile): Effect.Effect<Prepared, SqlError> =>
    Effect.gen(function*() {
      if (file.attempts > options.maxAttempts) {
        return {
          _tag: "Unprocessable",
          file,
          reason: `processing stopped ${options.maxAttempts} times without finishing (gave up)`
        } as const
      }
      if (file.content_problem !== null) return { _tag: "Unprocessable", file, reason: file.content_problem } as const
      const chunks: Array<string> = []
      let summary: string | undefined
      let problem: string | undefined
      const inline = file.content === null ? undefined : sectionsOf(file.content)
      // A long text: read from the database one section (and one character more, to know if it ends) at a time.
      let from = 0
      let index = 0
      for (;;) {
        let section: string
        if (inline !== undefined) {
          if (index >= inline.length) break
          section = inline[index++]
        } else {
          if (from < 0) break
          // `sectionSize + 1` characters are at least as many UTF-16 units: more than `sectionSize` units
          // means the text goes on, and the section is cut as `sectionsOf` cuts the whole text.
          const window = yield* repo.readContent(file.id, from, sectionSize + 1)
          if (window.length > sectionSize) {
            const head = window.slice(0, sectionSize)
            section = head.slice(0, sectionCut(head))
            from += codePoints(section)
          } else {
            section = window
            from = -1
          }
        }
        try {
          const text = normalizeDocument(section)
          summary ??= summarize(text)
          chunks.push(...chunkText(text))
        } catch (error) {
          if (!(error instanceof UnprocessableDocument)) throw error
          // A blank section of a longer document is skipped; a binary one fails the file.
          if (!error.message.includes("empty")) problem = error.message
        }
        if (problem !== undefined) break
        yield* yieldToEventLoop
      }
      if (problem !== undefined) return { _tag: "Unprocessable", file, reason: problem } as const
      if (summary === undefined || chunks.length === 0) {
        return {
          _tag: "Unprocessable",
          file,
          reason: "the document is empty once normalized (only whitespace or control characters)"
        } as const
      }
      return { _tag: "Chunked", file, summary, chunks } as const
    })

  /**
   * Embeds the chunks of every file together, `embedBatchSize` at a time;
   * the vectors of each file, or why its embedding failed.
   */
  const embedAll = Effect.fnUntraced(function*(files: ReadonlyArray<Extract<Prepared, { _tag: "Chunked" }>>) {
    const inputs = files.flatMap((prepared, index) => prepared.chunks.map((text) => ({ index, text })))
    const vectors = files.map((prepared) => new Array<ReadonlyArray<number>>(prepared.chunks.length))
    const failures = new Map<number, string>()
    const positions = files.map(() => 0)
    for (let from = 0; from < inputs.length; from += embedBatchSize) {
      const slice = inputs.slice(from, from + embedBatchSize).filter((input) => !failures.has(input.index))
      if (slice.length === 0) continue
      const response = yield* Effect.result(embedder.embedMany(slice.map((input) => input.text)))
      if (response._tag === "Failure") {
        for (const input of slice) failures.set(input.index, `embedding failed: ${response.failure.message}`)
      } else {
        slice.forEach((input, i) => {
          vectors[input.index][positions[input.index]++] = response.success.embeddings[i].vector
        })
      }
      yield* yieldToEventLoop
    }
    return files.map((_, index) =>
      failures.has(index)
        ? { _tag: "Failed" as const, reason: failures.get(index)! }
        : { _tag: "Embedded" as const, vectors: vectors[index] }
    )
  })

  const wellFormed = (vectors: ReadonlyArray<ReadonlyArray<number>>) => {
    const dimensions = vectors[0]?.length ?? 0
    return dimensions > 0 &&
      vectors.every((vector) =>
        vector !== undefined && vector.length === dimensions && vector.every((x) => Number.isFinite(x))
      )
  }

  /** One batch: prepare, embed, write, mark ready; the heartbeat holds the leases meanwhile. */
  const processBatch = (claimed: ReadonlyArray<ClaimedFile>) =>
    Effect.gen(function*() {
      const outcomes = new Map<string, Outcome>()
      const prepared: Array<Extract<Prepared, { _tag: "Chunked" }>> = []
      for (const file of claimed) {
        const result = yield* prepare(file).pipe(
          Effect.annotateLogs({ knowledgeFile: file.id, attempt: file.attempts })
        )
        if (result._tag === "Unprocessable") {
          yield* repo.fail(file, result.reason)
          outcomes.set(file.id, "failed")
        } else {
          prepared.push(result)
        }
      }
      const embedded = yield* embedAll(prepared)
      const storable: Array<
        { readonly file: ClaimedFile; readonly summary: string; readonly chunks: ReadonlyArray<FileChunk> }
      > = []
      for (let i = 0; i < prepared.length; i++) {
        const { chunks, file, summary } = prepared[i]
        const result = embedded[i]
        if (result._tag === "Failed") {
          outcomes.set(file.id, yield* failOrRetry(file, result.reason))
        } else if (!wellFormed(result.vectors)) {
          outcomes.set(
            file.id,
            yield* failOrRetry(
              file,
              "embedding failed: the embedding model returned empty, uneven or non-finite vectors"
            )
          )
        } else {
          storable.push({
            file,
            summary,
            chunks: chunks.map((content, ordinal) => ({ file, ordinal, content, embedding: result.vectors[ordinal] }))
          })
        }
      }
      const all = storable.flatMap((entry) => entry.chunks)
      for (let from = 0; from < all.length; from += chunksPerWrite) {
        yield* repo.storeChunks(model, all.slice(from, from + chunksPerWrite))
        yield* yieldToEventLoop
      }
      const marked = yield* repo.markReady(
        model,
        storable.map(({ chunks, file, summary }) => ({ file, summary, chunkCount: chunks.length }))
      )
      for (const { file } of storable) outcomes.set(file.id, marked.has(file.id) ? "ready" : "lost")
      return outcomes
    })

  // The embedding model is fixed for the life of the process: re-queueing other models' files is a start-up matter.
  // Taken by the first batch of the worker's lanes; given back if it fails, for the next batch to retry.
  let requeued = false
  const processDue = Effect.gen(function*() {
    if (!requeued) {
      requeued = true
      const count = yield* repo.requeueOtherModels(model).pipe(
        Effect.onError(() => Effect.sync(() => (requeued = false)))
      )
      if (count > 0) {
        yield* Effect.logInfo(`re-queued ${count} knowledge file(s) embedded by another model than ${model}`)
      }
    }
    const claimed = yield* repo.claimDue(options.batchSize, lease, inlineContentBytes)
    const report = { claimed: claimed.length, ready: 0, failed: 0, retried: 0 }
    if (claimed.length === 0) return report satisfies IngestionReport
    const renew = repo.extendLeases(claimed, lease).pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("could not renew the ingestion leases; they may expire and be claimed again", cause)
      ),
      Effect.delay(heartbeat),
      Effect.forever
    )
    const outcomes = yield* processBatch(claimed).pipe(Effect.raceFirst(Effect.andThen(renew, Effect.never)))
    for (const file of claimed) {
      const outcome = outcomes.get(file.id)
      if (outcome !== undefined && outcome !== "lost") report[outcome]++
      if (outcome === "failed") {
        yield* Effect.logWarning(`knowledge file ${file.id} (${file.filename}) failed to ingest`)
      }
    }
    return report satisfies IngestionReport
  }).pipe(Effect.withSpan("IngestionQueue.processDue"))

  return IngestionQueue.of({ processDue })
})
