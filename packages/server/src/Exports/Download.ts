/** A streamed download as an HTTP response: an attachment, never cached. */
import { Effect, Stream } from "effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { SqlError } from "effect/sql/SqlError"

export interface Download {
  readonly filename: string
  readonly contentType: string
  readonly body: Stream.Stream<Uint8Array, SqlError>
}

/** The response of a download; a database failure mid-stream ends the body early (and is logged). */
export const downloadResponse = (download: Download) =>
  HttpServerResponse.stream(
    download.body.pipe(
      Stream.tapCause((cause) => Effect.logError(`the download ${download.filename} failed while streaming`, cause))
    ),
    {
      contentType: download.contentType,
      headers: {
        "content-disposition": `attachment; filename="${download.filename}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff"
      }
    }
  )
