/**
 * The platform's downloads as streams of bytes, never held in memory: the
 * compliance provenance export, the conversations and metrics CSVs and the
 * ROI report. An Effect `Stream` for Effect users (`download*`), a web
 * `ReadableStream` for Promise users (`fetchDownload`). They need a session
 * (an administrator; a Security Officer for the compliance export).
 *
 * Failures, for Effect users: a {@link DownloadFailed} whose `reason` says
 * what happened, with `status` when an answer came and a one-line `message`.
 * For Promise users (`fetchDownload`) the same failures reject with the
 * Promise client's classes (see `PlatformError.ts`), and a body that breaks
 * off errors its `ReadableStream` with a {@link DownloadBrokenError}.
 */
import { Api } from "@agent-platform/domain"
import { type Duration, Effect, Schema, Stream } from "effect"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { defaultTimeout, sessionCookieName, withTimeout } from "./Client.ts"
import {
  ApiError,
  ConnectionError,
  describeFailure,
  PlatformError,
  reasonOf,
  TimeoutError,
  toPlatformError,
  UnexpectedResponse
} from "./PlatformError.ts"

export interface DownloadOptions {
  readonly baseUrl: string
  /** The session token (the `Service-Token` cookie) of a signed-in user. */
  readonly sessionToken: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * How long to wait for the download to start (its status and headers);
   * the body then takes as long as it takes. `fetchDownload` waits 30
   * seconds by default, like the Promise client; `download*` wait only when
   * given one (they use the `HttpClient` you provide as it is).
   */
  readonly timeout?: Duration.Input | undefined
}

/**
 * The download failed. `reason` says how:
 * - `Refused`: the service answered an error the API declares (`status`, its
 *   message; `cause` is the domain's typed error, e.g. `RoleMissing`);
 * - `Unreachable`: no answer (connection refused or reset, unknown host, invalid URL);
 * - `Timeout`: no answer within `timeout`;
 * - `UnexpectedAnswer`: an answer the contract does not describe (an undeclared
 *   status or body, or not the file's media type): probably not an Agent Platform service;
 * - `BrokeOff`: the body broke off before its end (`status` 200).
 *
 * `status` is the HTTP status when an answer came (`undefined` when none
 * did), `error` and `message` the same one line saying what to do, `cause`
 * the domain's, transport's or decoder's own error.
 */
export class DownloadFailed extends Schema.TaggedError<DownloadFailed>()("DownloadFailed", {
  reason: Schema.Literals(["Refused", "Unreachable", "Timeout", "UnexpectedAnswer", "BrokeOff"]),
  status: Schema.optional(Schema.Number),
  error: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    return this.error
  }
}

/**
 * What the body of a `fetchDownload` errors with when it broke off after the
 * answer started (`status` 200). `_tag` stays `DownloadFailed`, as in earlier versions.
 */
export class DownloadBrokenError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super({ _tag: "DownloadFailed", status: 200, message, cause })
  }
}

/** A download in progress: its file name (from Content-Disposition), media type and bytes. */
export interface Download {
  readonly filename: string | undefined
  readonly contentType: string
  readonly body: Stream.Stream<Uint8Array, DownloadFailed>
}

type Query = Readonly<Record<string, string | number | undefined>>

type ErrorDecoder = (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<unknown, unknown>

/** Built on first use: building a decoder walks the whole API declaration. */
const lazily = (build: () => ErrorDecoder): () => ErrorDecoder => {
  let decoder: ErrorDecoder | undefined
  return () => (decoder ??= build())
}

/** Each download's endpoint in the contract (its errors are decoded as the Effect client does) and media types. */
const downloads = {
  "/api/compliance/export": {
    decoder: lazily(() => HttpApiClient.decodeResponse(Api, { group: "compliance", endpoint: "export" })),
    mediaTypes: ["text/csv", "application/json"]
  },
  "/api/export/conversations": {
    decoder: lazily(() => HttpApiClient.decodeResponse(Api, { group: "exports", endpoint: "conversations" })),
    mediaTypes: ["text/csv"]
  },
  "/api/export/metrics": {
    decoder: lazily(() => HttpApiClient.decodeResponse(Api, { group: "exports", endpoint: "metrics" })),
    mediaTypes: ["text/csv"]
  },
  "/api/export/roi-report": {
    decoder: lazily(() => HttpApiClient.decodeResponse(Api, { group: "exports", endpoint: "roiReport" })),
    mediaTypes: ["text/html"]
  }
} satisfies Record<string, { readonly decoder: () => ErrorDecoder; readonly mediaTypes: ReadonlyArray<string> }>

/** The paths of the platform's downloads. */
export type DownloadPath = keyof typeof downloads

const filenameOf = (disposition: string | undefined) =>
  disposition === undefined ? undefined : /filename="([^"]+)"/.exec(disposition)?.[1]

const urlOf = (options: DownloadOptions, path: string, query: Query) => {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, "")}${path}`)
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value))
  return url.toString()
}

/** The request failed before an answer: the Promise client's text, one line. */
const noAnswer = (error: HttpClientError.HttpClientError) => {
  const { reason, status, text } = describeFailure(error)
  return new DownloadFailed({ reason, status, error: text, cause: error })
}

const unexpected = (url: string, status: number, what: string, cause?: unknown) =>
  new DownloadFailed({
    reason: "UnexpectedAnswer",
    status,
    error: `${url} answered HTTP ${status} ${what}: is it an Agent Platform service?`,
    cause
  })

/** An answer other than 200: the error the endpoint declares for it, or an unexpected answer. */
const refusal = (path: DownloadPath, url: string, response: HttpClientResponse.HttpClientResponse) =>
  Effect.exit(downloads[path].decoder()(response)).pipe(
    Effect.flatMap((exit) => {
      const failure = exit._tag === "Failure"
        ? exit.cause.reasons.find((reason) => reason._tag === "Fail")
        : undefined
      const declared = failure?._tag === "Fail" ? toPlatformError(failure.error) : undefined
      return Effect.fail(
        declared instanceof ApiError
          ? new DownloadFailed({
            reason: "Refused",
            status: response.status,
            error: declared.message,
            cause: failure?.error
          })
          : unexpected(url, response.status, "with a body this client does not understand", failure?.error)
      )
    })
  )

/** GET `path` with `query` as a stream. Needs an `HttpClient`. */
export const download = (
  options: DownloadOptions,
  path: DownloadPath,
  query: Query = {}
): Effect.Effect<Download, DownloadFailed, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const provided = yield* HttpClient.HttpClient
    const client = options.timeout === undefined ? provided : withTimeout(options.timeout)(provided)
    const url = urlOf(options, path, query)
    const response = yield* HttpClientRequest.get(url).pipe(
      HttpClientRequest.setHeaders({ ...options.headers, cookie: `${sessionCookieName}=${options.sessionToken}` }),
      client.execute,
      Effect.mapError(noAnswer)
    )
    if (response.status !== 200) return yield* refusal(path, url, response)
    const contentType = response.headers["content-type"] ?? ""
    const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
    if (!(downloads[path].mediaTypes as ReadonlyArray<string>).includes(mediaType)) {
      return yield* unexpected(
        url,
        response.status,
        `with ${contentType === "" ? "no content type" : contentType}, not ${downloads[path].mediaTypes.join(" or ")}`
      )
    }
    return {
      filename: filenameOf(response.headers["content-disposition"]),
      contentType,
      body: response.stream.pipe(
        Stream.mapError((cause) =>
          new DownloadFailed({
            reason: "BrokeOff",
            status: response.status,
            error: `the download of ${url} broke off (${
              reasonOf(cause.reason.cause ?? cause)
            }): what arrived is incomplete; download it again`,
            cause
          })
        )
      )
    } satisfies Download
  })

type Range = { readonly from?: string | undefined; readonly to?: string | undefined }

/** GET /api/compliance/export: the provenance report, CSV (default) or JSON. Security Officer. */
export const downloadProvenance = (
  options: DownloadOptions,
  query: Range & { readonly format?: "csv" | "json" | undefined } = {}
) => download(options, "/api/compliance/export", query)

/** GET /api/export/conversations: one CSV row per message. Admin. */
export const downloadConversations = (
  options: DownloadOptions,
  query: Range & { readonly group_id?: string | undefined } = {}
) => download(options, "/api/export/conversations", query)

/** GET /api/export/metrics: a CSV row per day and space. Admin. */
export const downloadMetrics = (options: DownloadOptions, query: Range = {}) =>
  download(options, "/api/export/metrics", query)

/** GET /api/export/roi-report: the printable HTML page. Admin. */
export const downloadRoiReport = (options: DownloadOptions, query: { readonly days?: number | undefined } = {}) =>
  download(options, "/api/export/roi-report", query)

/** The Promise client's error for a failed download. */
const toDownloadPlatformError = (error: DownloadFailed): PlatformError => {
  switch (error.reason) {
    case "Refused":
    case "Unreachable":
    case "Timeout": {
      const platform = toPlatformError(error.cause)
      if (platform._tag !== "UnknownError") return platform
      return error.reason === "Timeout" ? new TimeoutError(error.message) : new ConnectionError(error.message)
    }
    case "UnexpectedAnswer":
      return new UnexpectedResponse(error.status, error.message, error.cause)
    case "BrokeOff":
      return new DownloadBrokenError(error.message, error.cause)
  }
}

/**
 * For Promise users: the download as a web `ReadableStream` (pipe it to a
 * file with `stream.Readable.fromWeb` or `Response`), over `fetch`.
 * Rejects like a Promise client call: `ApiError` for an error the API
 * declares (`_tag` `Unauthenticated`, `RoleMissing`, `FeatureDisabled`,
 * `InvalidRequest`, ..., with `status`, `body` and the service's message),
 * `ConnectionError` or `TimeoutError` when no answer came, and
 * `UnexpectedResponse` for an answer that is not this service's. A body that
 * breaks off errors its stream with `DownloadBrokenError`.
 */
export const fetchDownload = (
  options: DownloadOptions,
  path: DownloadPath,
  query: Query = {}
): Promise<
  { readonly filename: string | undefined; readonly contentType: string; readonly body: ReadableStream<Uint8Array> }
> =>
  Effect.runPromiseExit(
    download({ ...options, timeout: options.timeout ?? defaultTimeout }, path, query).pipe(
      Effect.provide(FetchHttpClient.layer)
    )
  ).then((exit) => {
    if (exit._tag === "Success") {
      const { body, contentType, filename } = exit.value
      return {
        filename,
        contentType,
        body: Stream.toReadableStream(body.pipe(Stream.mapError(toDownloadPlatformError)))
      }
    }
    const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    throw failure !== undefined && failure._tag === "Fail"
      ? toDownloadPlatformError(failure.error)
      : toPlatformError(exit.cause)
  })
