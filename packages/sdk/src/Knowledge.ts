/**
 * Waiting for an ingested document: ingestion is asynchronous (pending →
 * processing → ready, or failed), so integrators poll until the file settles.
 */
import type { Knowledge } from "@agent-platform/domain"
import { Data, type Duration, Effect, Schedule } from "effect"
import type { Connected } from "./Client.ts"

/** The file did not settle in time, failed, or is not the agent's (`file` undefined); `file` is its last state. */
export class IngestionNotReady extends Data.TaggedError("IngestionNotReady")<{
  readonly file: Knowledge.KnowledgeFile | undefined
  readonly message: string
}> {}

/**
 * Polls `GET /v1/knowledge?agent_id=` until the file is `ready` (or fails on
 * `failed`, at once when the agent has no such file, or on timeout).
 * `onProgress` sees every state, e.g. to draw a progress line.
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
    // A file is listed from the moment its upload answers 201: one that is not names no file of this agent.
    if (file === undefined) {
      return yield* new IngestionNotReady({
        file,
        message:
          `file ${target.fileId} not found among agent ${target.agentId}'s knowledge: check the file_id and agent_id the upload returned (or the file was deleted)`
      })
    }
    if (file.status === "ready") return file
    if (file.status === "failed") {
      return yield* new IngestionNotReady({ file, message: `ingestion failed: ${file.error ?? "unknown error"}` })
    }
    return yield* new IngestionNotReady({ file, message: `still ${file.status}` })
  })
  return poll.pipe(
    Effect.retry({
      // Only a file still on its way is waited for: a failed or missing one answers at once.
      while: (error) =>
        error._tag === "IngestionNotReady" && error.file !== undefined && error.file.status !== "failed",
      schedule: Schedule.spaced(options.interval ?? "250 millis")
    }),
    Effect.timeoutOrElse({
      duration: options.timeout ?? "2 minutes",
      orElse: () =>
        Effect.fail(new IngestionNotReady({ file: undefined, message: "timed out waiting for the file to be ready" }))
    })
  )
}
