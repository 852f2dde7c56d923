/**
 * The platform's downloads as streams of bytes, never held in memory: the
 * compliance provenance export, the conversations and metrics CSVs and the
 * ROI report. An Effect `Stream` for Effect users (`download*`), a web
 * `ReadableStream` for Promise users (`fetchDownload`). They need a session
 * (an administrator; a Security Officer for the compliance export).
 * Errors the API answers before the body starts arrive as `DownloadFailed`
 * with the status and the server's message.
 */
import { Effect, Schema, Stream } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { sessionCookieName } from "./Client.ts"

export interface DownloadOptions {
  readonly baseUrl: string
  /** The session token (the `Service-Token` cookie) of a signed-in user. */
  readonly sessionToken: string
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** The server refused the download, or could not be reached. */
export class DownloadFailed extends Schema.TaggedError<DownloadFailed>()("DownloadFailed", {
  /** The HTTP status; 0 when the server was not reached. */
  status: Schema.Number,
  error: Schema.String
}) {}

/** A download in progress: its file name (from Content-Disposition), media type and bytes. */
export interface Download {
  readonly filename: string | undefined
  readonly contentType: string
  readonly body: Stream.Stream<Uint8Array, DownloadFailed>
}

type Query = Readonly<Record<string, string | number | undefined>>

const filenameOf = (disposition: string | undefined) =>
  disposition === undefined ? undefined : /filename="([^"]+)"/.exec(disposition)?.[1]

const urlOf = (options: DownloadOptions, path: string, query: Query) => {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, "")}${path}`)
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value))
  return url.toString()
}

/** GET `path` with `query` as a stream. Needs an `HttpClient`. */
export const download = (
  options: DownloadOptions,
  path: string,
  query: Query = {}
): Effect.Effect<Download, DownloadFailed, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* HttpClientRequest.get(urlOf(options, path, query)).pipe(
      HttpClientRequest.setHeaders({ ...options.headers, cookie: `${sessionCookieName}=${options.sessionToken}` }),
      client.execute,
      Effect.mapError((cause) =>
        new DownloadFailed({ status: 0, error: `cannot reach ${options.baseUrl}: ${cause.message}` })
      )
    )
    if (response.status !== 200) {
      const body = yield* Effect.orElseSucceed(response.json, () => undefined)
      const message = typeof body === "object" && body !== null && "error" in body && typeof body.error === "string"
        ? body.error
        : `the server answered HTTP ${response.status}`
      return yield* new DownloadFailed({ status: response.status, error: message })
    }
    return {
      filename: filenameOf(response.headers["content-disposition"]),
      contentType: response.headers["content-type"] ?? "application/octet-stream",
      body: response.stream.pipe(
        Stream.mapError((cause) =>
          new DownloadFailed({ status: 200, error: `the download broke off: ${cause.message}` })
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

/**
 * For Promise users: the download as a web `ReadableStream` (pipe it to a
 * file with `stream.Readable.fromWeb` or `Response`), over `fetch`.
 * Rejects with `DownloadFailed` when the server refuses it.
 */
export const fetchDownload = async (
  options: DownloadOptions,
  path: "/api/compliance/export" | "/api/export/conversations" | "/api/export/metrics" | "/api/export/roi-report",
  query: Query = {}
): Promise<
  { readonly filename: string | undefined; readonly contentType: string; readonly body: ReadableStream<Uint8Array> }
> => {
  const response = await fetch(urlOf(options, path, query), {
    headers: { ...options.headers, cookie: `${sessionCookieName}=${options.sessionToken}` }
  }).catch((cause: unknown) => {
    throw new DownloadFailed({ status: 0, error: `cannot reach ${options.baseUrl}: ${String(cause)}` })
  })
  if (response.status !== 200 || response.body === null) {
    const body: unknown = await response.json().catch(() => undefined)
    const message = typeof body === "object" && body !== null && "error" in body && typeof body.error === "string"
      ? body.error
      : `the server answered HTTP ${response.status}`
    throw new DownloadFailed({ status: response.status, error: message })
  }
  return {
    filename: filenameOf(response.headers.get("content-disposition") ?? undefined),
    contentType: response.headers.get("content-type") ?? "application/octet-stream",
    body: response.body
  }
}
