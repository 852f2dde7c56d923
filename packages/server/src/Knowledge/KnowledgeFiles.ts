/**
 * An agent's knowledge files (spec: /v1/knowledge): ingesting a document puts
 * it in the queue as `pending` and returns at once; the ingestion worker
 * moves it to `processing` and then `ready`, or `failed` with an `error`.
 * Deleting a file removes its chunks from search.
 */
import { Errors, Knowledge } from "@agent-platform/domain"
import { Context, Duration, Effect, Layer, Option, Queue } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { isUuid } from "../Platform/Ids.ts"
import { Notifications } from "../Platform/Notifications.ts"
import { binaryContentProblem, storableText } from "./Chunking.ts"
import { type FileRow, KnowledgeRepo, partSize } from "./KnowledgeRepo.ts"

/** Lets the event loop run what waits (requests, timers) before the next slice of work. */
const yieldToEventLoop = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** The Notifications topic that wakes the ingestion worker up. */
export const ingestTopic = "knowledge_ingest"

/** The least time between two wake-ups of the worker: what an upload in a burst may wait more to be noticed. */
const wakeUpSpacing = Duration.millis(20)

export const toKnowledgeFile = (row: FileRow): Knowledge.KnowledgeFile => ({
  id: row.id,
  filename: row.filename,
  content_summary: row.content_summary,
  status: row.status,
  size_bytes: row.size_bytes,
  agent_id: row.agent_id,
  uploaded_at: row.uploaded_at.toISOString(),
  error: row.error
})

export class KnowledgeFiles extends Context.Service<KnowledgeFiles, {
  /**
   * Queues a document for an agent of the tenant; 404 for an unknown agent
   * (or another tenant's, or outside `spaceId` when the caller is bound to one).
   */
  readonly ingest: (input: {
    readonly tenantId: string
    readonly agentId: string
    /** The space the caller is bound to (Access/SpaceBinding.ts `boundSpace`); null or absent for the whole tenant. */
    readonly spaceId?: string | null | undefined
    readonly filename: string
    readonly content: string
  }) => Effect.Effect<typeof Knowledge.IngestAccepted.Type, Errors.NotFound | Errors.InvalidRequest | SqlError>
  /**
   * The tenant's files, of one agent when `agentId` is given, of the agents
   * of `spaceId` only when the caller is bound to one; oldest first.
   */
  readonly list: (input: {
    readonly tenantId: string
    readonly agentId?: string | undefined
    /** The space the caller is bound to (Access/SpaceBinding.ts `boundSpace`); null or absent for the whole tenant. */
    readonly spaceId?: string | null | undefined
  }) => Effect.Effect<ReadonlyArray<Knowledge.KnowledgeFile>, SqlError>
  readonly get: (
    input: { readonly tenantId: string; readonly fileId: string }
  ) => Effect.Effect<Knowledge.KnowledgeFile, Errors.NotFound | SqlError>
  /**
   * Deletes a file and its chunks; 404 for an unknown file, another tenant's,
   * or one of an agent outside `spaceId` (when given).
   */
  readonly remove: (
    input: { readonly tenantId: string; readonly fileId: string; readonly spaceId?: string | null | undefined }
  ) => Effect.Effect<void, Errors.NotFound | SqlError>
}>()("@agent-platform/server/Knowledge/KnowledgeFiles") {
  /** Needs `KnowledgeRepo`; wakes the worker through `Notifications` when the process provides it. */
  static readonly layer = Layer.effect(
    KnowledgeFiles,
    Effect.gen(function*() {
      const repo = yield* KnowledgeRepo
      const notifications = yield* Effect.serviceOption(Notifications)
      // One wake-up in flight at a time, and at most one per `wakeUpSpacing`: ingests committed meanwhile collapse
      // into one more after it (a sliding queue of one). The worker drains the queue until nothing is due, so a
      // wake-up while it works only says "once more": a burst of uploads costs a NOTIFY (a statement and a commit)
      // per spacing, not one per upload, and a lone upload wakes the worker at once.
      const wakeWorker = yield* Option.match(notifications, {
        onNone: () => Effect.succeed(Effect.void),
        onSome: (notifications) =>
          Effect.gen(function*() {
            const wakeUps = yield* Queue.sliding<void>(1)
            yield* Queue.take(wakeUps).pipe(
              Effect.andThen(notifications.publish(ingestTopic, "")),
              Effect.andThen(Effect.sleep(wakeUpSpacing)),
              Effect.catch((error) =>
                Effect.logWarning("could not wake the ingestion worker; it will find the file on its next cycle", error)
              ),
              Effect.forever,
              Effect.forkScoped
            )
            return Effect.asVoid(Queue.offer(wakeUps, undefined))
          })
      })
      const fileNotFound = (fileId: string) => new Errors.NotFound({ error: `knowledge file ${fileId} not found` })

      const ingest = Effect.fn("KnowledgeFiles.ingest")(function*(input: {
        readonly tenantId: string
        readonly agentId: string
        readonly spaceId?: string | null | undefined
        readonly filename: string
        readonly content: string
      }) {
        // A long text: let the requests that waited while its body was parsed and decoded run before it is checked.
        const long = input.content.length > partSize
        if (long) yield* yieldToEventLoop
        const filename = input.filename.trim()
        const sizeBytes = Buffer.byteLength(input.content, "utf8")
        if (filename.length === 0 || filename.length > Knowledge.maxFilenameLength) {
          return yield* new Errors.InvalidRequest({
            error: `filename must have 1 to ${Knowledge.maxFilenameLength} characters`
          })
        }
        if (sizeBytes === 0 || sizeBytes > Knowledge.maxContentBytes) {
          return yield* new Errors.InvalidRequest({ error: "content must have 1 byte to 2 MiB of text" })
        }
        const agentNotFound = () => new Errors.NotFound({ error: `agent ${input.agentId} not found` })
        if (!isUuid(input.agentId)) return yield* agentNotFound()
        if (long) yield* yieldToEventLoop
        const row = yield* repo.insertFile({
          tenantId: input.tenantId,
          agentId: input.agentId,
          spaceId: input.spaceId ?? null,
          filename,
          content: storableText(input.content),
          contentProblem: binaryContentProblem(input.content) ?? null,
          sizeBytes
        })
        if (row === undefined) return yield* agentNotFound()
        yield* wakeWorker
        return {
          file_id: row.id,
          status: "pending" as const,
          message: "Queued for ingestion: the file moves to processing, then ready (or failed, with an error)."
        }
      })

      return KnowledgeFiles.of({
        ingest,
        list: ({ agentId, spaceId, tenantId }) =>
          agentId !== undefined && !isUuid(agentId)
            ? Effect.succeed([])
            : Effect.map(repo.listFiles(tenantId, agentId, spaceId ?? null), (rows) => rows.map(toKnowledgeFile)),
        get: ({ fileId, tenantId }) =>
          isUuid(fileId)
            ? Effect.flatMap(repo.findFile(tenantId, fileId), (row) =>
              row === undefined ? Effect.fail(fileNotFound(fileId)) : Effect.succeed(toKnowledgeFile(row)))
            : Effect.fail(fileNotFound(fileId)),
        remove: ({ fileId, spaceId, tenantId }) =>
          isUuid(fileId)
            ? Effect.flatMap(
              repo.deleteFile(tenantId, fileId, spaceId ?? null),
              (deleted) => (deleted ? Effect.void : Effect.fail(fileNotFound(fileId)))
            )
            : Effect.fail(fileNotFound(fileId))
      })
    })
  )
}
