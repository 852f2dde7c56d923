/**
 * Waiting for an ingested document: ingestion is asynchronous (pending →
 * processing → ready, or failed), so integrators poll until the file settles.
 */
import type { Knowledge } from "@agent-platform/domain"
import { Data, type Duration, Effect, Schedule } from "effect"
import type { Connected } from "./Client.ts"

/** The file did not settle in time, or failed; `file` is its last state. */
export class IngestionNotReady extends Data.TaggedError("IngestionNotReady")<{
  readonly file: Knowledge.KnowledgeFile | undefined
  readonly message: string
}> {}

/**
 * Polls `GET /v1/knowledge?agent_id=` until the file is `ready` (or fails on
 * `failed` / timeout). `onProgress` sees every state, e.g. to draw a progress line.
 */
export const waitUntilReady = (
  client: Connected,
  target: { readonly agentId: string; readonly fileId: string },
  options: {
    readonly timeout?: Duration.Input | undefined
    readonly interval?: Duration.Input | undefined
    readonly onProgress?: ((file: Knowledge.KnowledgeFile | undefined) => void) | undefined
  } = {}
) => {
  const poll = Effect.gen(function*() {
    const { files } = yield* client.api.knowledge.list({ query: { agent_id: target.agentId } })
    const file = files.find((f) => f.id === target.fileId)
    options.onProgress?.(file)
    if (file?.status === "ready") return file
    if (file?.status === "failed") {
      return yield* new IngestionNotReady({ file, message: `ingestion failed: ${file.error ?? "unknown error"}` })
    }
    return yield* new IngestionNotReady({ file, message: `still ${file?.status ?? "missing"}` })
  })
  return poll.pipe(
    Effect.retry({
      while: (error) => error._tag === "IngestionNotReady" && error.file?.status !== "failed",
      schedule: Schedule.spaced(options.interval ?? "250 millis")
    }),
    Effect.timeoutOrElse({
      duration: options.timeout ?? "2 minutes",
      orElse: () =>
        Effect.fail(new IngestionNotReady({ file: undefined, message: "timed out waiting for the file to be ready" }))
    })
  )
}
