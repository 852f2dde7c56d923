/**
 * `export conversations|metrics`: the administrator's CSV exports, streamed
 * from the service to `--out FILE` (or standard output) as they arrive.
 * `saveDownload` is shared by `compliance export` and `report roi`.
 */
import * as Sdk from "@agent-platform/sdk"
import { Console, Effect, Option, Schema, Stream } from "effect"
import { Command, Flag } from "effect/cli"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import { open } from "node:fs/promises"
import * as Connection from "../Connection.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"

/** The output file cannot be written. */
export class OutputFileFailed
  extends Schema.TaggedError<OutputFileFailed>()("OutputFileFailed", { message: Schema.String })
{}

export const outFlag = Flag.String("out").pipe(
  Flag.withDescription("File to write (default: standard output)"),
  Flag.optional
)
export const fromFlag = Flag.String("from").pipe(
  Flag.withDescription("First UTC day, YYYY-MM-DD (default: 30 days ago)"),
  Flag.optional
)
export const toFlag = Flag.String("to").pipe(
  Flag.withDescription("Last UTC day, YYYY-MM-DD (default: today)"),
  Flag.optional
)

/**
 * Downloads `request` with the stored session, waiting at most `--timeout`
 * for it to start, and writes it, chunk by chunk, to `out` (then says where,
 * and how many bytes) or to standard output. `request` gets the signed-in
 * client too, to look up what its query names.
 */
export const saveDownload = <E, R>(
  out: Option.Option<string>,
  request: (options: Sdk.DownloadOptions, client: Sdk.Connected) => Effect.Effect<Sdk.Download, E, R>
) =>
  Connection.withSession(({ client, http, url }) =>
    Effect.gen(function*() {
      const token = yield* client.sessionToken
      const download = yield* request({ baseUrl: url, sessionToken: token ?? "" }, client).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      if (Option.isNone(out)) {
        return yield* Stream.runForEach(Stream.decodeText(download.body), (text) => Output.write(text))
      }
      const path = out.value
      const file = yield* Effect.tryPromise({
        try: () => open(path, "w"),
        catch: (cause) => new OutputFileFailed({ message: `cannot write ${path}: ${String(cause)}` })
      })
      let bytes = 0
      yield* Stream.runForEach(download.body, (chunk) =>
        Effect.tryPromise({
          try: async () => {
            await file.write(chunk)
            bytes += chunk.byteLength
          },
          catch: (cause) => new OutputFileFailed({ message: `cannot write ${path}: ${String(cause)}` })
        })).pipe(Effect.ensuring(Effect.promise(() => file.close())))
      yield* Console.error(
        `wrote ${path} (${bytes.toLocaleString("en-US")} bytes${
          download.filename === undefined ? "" : `, ${download.filename}`
        })`
      )
    }).pipe(Effect.catchIf((error): error is Sdk.DownloadFailed => error instanceof Sdk.DownloadFailed, (failed) =>
      // No answer came: the transport's own error, so a refused connection or a late answer is told as every command tells it.
      Effect.fail(
        (failed.reason === "Unreachable" || failed.reason === "Timeout") &&
          HttpClientError.isHttpClientError(failed.cause)
          ? failed.cause
          : failed
      )))
  )

const conversations = Command.make(
  "conversations",
  {
    from: fromFlag,
    to: toFlag,
    space: Flag.String("space").pipe(Flag.withDescription("Only this space (its code or id)"), Flag.optional),
    out: outFlag
  },
  ({ from, out, space, to }) =>
    saveDownload(out, (options, client) =>
      Effect.gen(function*() {
        const spaceId = Option.isSome(space) ? (yield* Lookup.space(client, space.value)).id : undefined
        return yield* Sdk.downloadConversations(options, {
          from: Option.getOrUndefined(from),
          to: Option.getOrUndefined(to),
          group_id: spaceId
        })
      }))
).pipe(Command.withDescription("Export conversations as CSV, one row per message (admin)"))

const metrics = Command.make(
  "metrics",
  { from: fromFlag, to: toFlag, out: outFlag },
  ({ from, out, to }) =>
    saveDownload(
      out,
      (options) => Sdk.downloadMetrics(options, { from: Option.getOrUndefined(from), to: Option.getOrUndefined(to) })
    )
).pipe(Command.withDescription("Export daily metrics per space as CSV (admin)"))

export const exportCommand = Command.make("export").pipe(
  Command.withDescription("Data exports (admin)"),
  Command.withSubcommands([conversations, metrics])
)
