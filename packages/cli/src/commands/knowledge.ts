/**
 * `knowledge ingest|list|delete`: the documents agents answer from, as an API
 * key (`files`, or `knowledge:read` / `knowledge:write`).
 *
 * `ingest` uploads a UTF-8 text file and follows it through the pipeline on
 * one progress line — `refunds.md: pending… processing… ready (1,234 bytes)` —
 * ending with exit code 1 and the pipeline's message when it ends `failed`.
 */
import { Knowledge } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import {
  type Cause,
  Console,
  Effect,
  Fiber,
  FileSystem,
  Option,
  Path,
  type PlatformError,
  Queue,
  Schema,
  Stream
} from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Invocation from "../Invocation.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

/** The file cannot be sent: unreadable, empty, not UTF-8 text, or over the size limit. */
export class DocumentRefused extends Schema.TaggedError<DocumentRefused>()("DocumentRefused", {
  message: Schema.String
}) {}

/** The document ended `failed`, or did not settle in time. */
export class IngestionFailed extends Schema.TaggedError<IngestionFailed>()("IngestionFailed", {
  message: Schema.String
}) {}

/** `1,234 bytes`. */
const bytes = (count: number): string => `${count.toLocaleString("en-US")} bytes`

/** `2 MiB`. */
const mebibytes = (count: number): string => `${Number((count / (1024 * 1024)).toFixed(1))} MiB`

/** Why a file cannot be read, in the words of `ls` and `cat`. */
const whyUnreadable = (error: PlatformError.PlatformError): string => {
  switch (error.reason._tag) {
    case "NotFound":
      return "no such file"
    case "PermissionDenied":
      return "permission denied"
    default:
      return error.message
  }
}

/** A document to ingest: the file's name and its text. */
interface Document {
  readonly filename: string
  readonly content: string
}

/** Reads `file` as UTF-8 text, refusing what the service would (over 2 MiB, empty) before sending it. */
const readDocument = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const filename = path.basename(file)
  const refuse = (message: string) => Effect.fail(new DocumentRefused({ message }))
  const unreadable = (error: PlatformError.PlatformError) =>
    new DocumentRefused({ message: `cannot read ${file}: ${whyUnreadable(error)}` })
  const info = yield* fs.stat(file).pipe(Effect.mapError(unreadable))
  if (info.type !== "File") return yield* refuse(`${file} is not a file`)
  const size = Number(info.size)
  if (size > Knowledge.maxContentBytes) {
    return yield* refuse(
      `${filename} is ${bytes(size)}: documents are limited to ${mebibytes(Knowledge.maxContentBytes)} (${
        bytes(Knowledge.maxContentBytes)
      }); split it into smaller files`
    )
  }
  const raw = yield* fs.readFile(file).pipe(Effect.mapError(unreadable))
  const content = yield* Effect.try({
    try: () => new TextDecoder("utf-8", { fatal: true }).decode(raw),
    catch: () => new DocumentRefused({ message: `${filename} is not UTF-8 text: only text documents can be ingested` })
  })
  if (content.trim().length === 0) return yield* refuse(`${filename} is empty`)
  return { filename, content } satisfies Document
})

/** The words of the progress line for a state: `pending…`, `processing…`, `ready (1,234 bytes)`, `failed`. */
const stateWords = (file: Knowledge.KnowledgeFile): string => {
  switch (file.status) {
    case "ready":
      return `ready (${bytes(file.size_bytes)})`
    case "failed":
      return "failed"
    default:
      return `${file.status}…`
  }
}

const settled = (file: Knowledge.KnowledgeFile) => file.status === "ready" || file.status === "failed"

/**
 * Prints the progress line: the state the service accepted the document in,
 * then each new state it is offered, and closes the line when the states end.
 */
const printProgress = (
  filename: string,
  accepted: Knowledge.KnowledgeFileStatus,
  states: Queue.Dequeue<Knowledge.KnowledgeFile, Cause.Done>
) =>
  Effect.gen(function*() {
    yield* Output.write(`${Output.printable(filename)}: ${accepted}…`)
    const last = yield* Stream.fromQueue(states).pipe(
      Stream.runFoldEffect(
        () => ({ status: accepted, lineOpen: true }),
        (shown, file) =>
          !shown.lineOpen || file.status === shown.status
            ? Effect.succeed(shown)
            : Effect.as(
              Output.write(` ${stateWords(file)}${settled(file) ? "\n" : ""}`),
              { status: file.status, lineOpen: !settled(file) }
            )
      )
    )
    if (last.lineOpen) yield* Output.write("\n")
  })

const ingest = Command.make(
  "ingest",
  {
    file: Argument.File("file").pipe(
      Argument.withDescription("A UTF-8 text document (Markdown, plain text, ...), at most 2 MiB")
    ),
    agent: Flag.String("agent").pipe(
      Flag.withDescription("The agent whose knowledge it becomes (its name or id)"),
      Flag.withSchema(Knowledge.IngestRequest.fields.agent_id)
    ),
    key: Connection.apiKeyFlag
  },
  Effect.fnUntraced(function*({ file, agent, key }) {
    const { json } = yield* root
    const { client } = yield* Connection.withApiKey(key)
    const document = yield* readDocument(file)
    const { id: agentId } = yield* Lookup.agentAsKey(client, agent)
    const accepted = yield* client.api.knowledge.ingest({
      payload: { agent_id: agentId, filename: document.filename, content: document.content }
    })
    const states = yield* Queue.unbounded<Knowledge.KnowledgeFile, Cause.Done>()
    const printer = yield* (json ? Effect.void : printProgress(document.filename, accepted.status, states)).pipe(
      Effect.forkChild
    )
    const finished = yield* Sdk.waitUntilReady(client, { agentId, fileId: accepted.file_id }, {
      onProgress: (state) => {
        if (state !== undefined) Queue.offerUnsafe(states, state)
      }
    }).pipe(
      // The progress line is complete before the result, or the error line, is printed.
      Effect.ensuring(Effect.andThen(Queue.end(states), Fiber.join(printer).pipe(Effect.ignore))),
      Effect.catchTag("IngestionNotReady", (notReady) =>
        Effect.gen(function*() {
          if (json && notReady.file !== undefined) yield* Output.json(notReady.file)
          return yield* new IngestionFailed({
            message: notReady.file?.status === "failed"
              ? `${document.filename}: ingestion failed: ${notReady.file.error ?? "no reason given"}`
              : `${document.filename}: ${notReady.message} (file ${accepted.file_id})`
          })
        }))
    )
    if (json) yield* Output.json(finished)
  })
).pipe(
  Command.withDescription("Add a document to an agent's knowledge and wait until it is ready to answer from"),
  Command.withExamples([{
    command: "agent-platform knowledge ingest docs/refunds.md --agent Support",
    description: "Ingest a document; prints `refunds.md: pending… processing… ready (1,234 bytes)`"
  }])
)

const list = Command.make(
  "list",
  {
    agent: Flag.String("agent").pipe(Flag.withDescription("Only this agent's files (its name or id)"), Flag.optional),
    key: Connection.apiKeyFlag
  },
  Effect.fnUntraced(function*({ agent, key }) {
    const { json } = yield* root
    const { client } = yield* Connection.withApiKey(key)
    const agentId = Option.isSome(agent) ? (yield* Lookup.agentAsKey(client, agent.value)).id : undefined
    const listed = yield* client.api.knowledge.list({ query: agentId === undefined ? {} : { agent_id: agentId } })
    if (json) return yield* Output.json(listed)
    if (listed.files.length === 0) {
      return yield* Console.log(
        `No knowledge files yet: add one with ${yield* Invocation.command("knowledge ingest FILE --agent AGENT")}.`
      )
    }
    yield* Output.table<Knowledge.KnowledgeFile>([
      ["id", (file) => file.id],
      ["filename", (file) => file.filename],
      ["status", (file) => file.status],
      ["bytes", (file) => file.size_bytes.toLocaleString("en-US")],
      ["agent", (file) => file.agent_id],
      ["uploaded", (file) => Output.minute(file.uploaded_at)],
      ["error", (file) => Output.orDash(file.error)]
    ], listed.files)
  })
).pipe(Command.withDescription("List knowledge files and their state (pending, processing, ready, failed)"))

const remove = Command.make(
  "delete",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The file's id, as `knowledge list` shows it")),
    key: Connection.apiKeyFlag
  },
  Effect.fnUntraced(function*({ id, key }) {
    const { json } = yield* root
    const { client } = yield* Connection.withApiKey(key)
    const deleted = yield* client.api.knowledge.delete({ params: { id } })
    if (json) return yield* Output.json(deleted)
    yield* Console.log(`${id}: ${Output.printable(deleted.message)}`)
  })
).pipe(Command.withDescription("Delete a knowledge file and its indexed chunks"))

export const knowledge = Command.make("knowledge").pipe(
  Command.withDescription("Ingest, list and delete the documents agents answer from (as an API key)"),
  Command.withSubcommands([ingest, list, remove])
)
