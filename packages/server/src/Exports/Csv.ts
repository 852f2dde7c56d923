/**
 * CSV as every export writes it, with csv-stringify: RFC 4180 (CRLF line
 * ends, a header row, a field quoted when it holds the delimiter, a quote or
 * a line break — `quote_record_delimiter`, since with a CRLF delimiter the
 * library would otherwise leave a lone LF unquoted), and formula injection
 * neutralised per OWASP ("CSV Injection"): a text cell that begins with `=`,
 * `+`, `-`, `@`, a tab or a carriage return (or their full-width forms) is
 * prefixed with a single quote, so a spreadsheet shows it as text instead of
 * evaluating it. Numbers are written as numbers (a negative one is not text).
 *
 * Bodies are streams: the header, then one chunk per batch of rows as the
 * database returns it, so an export of millions of rows never sits in memory.
 */
import { stringify } from "csv-stringify/sync"
import { Stream } from "effect"

export type Cell = string | number | boolean | null | undefined

const options = {
  record_delimiter: "\r\n",
  quote_record_delimiter: true,
  escape_formulas: true,
  cast: { boolean: (value: boolean) => (value ? "true" : "false") }
} as const

/**
 * Records per database read for a CSV body, and per csv-stringify call: sized
 * so that an export leaves nothing behind in the old generation. The library allocates a few hundred bytes of short-lived
 * garbage per cell (some 16 KB per provenance row of 25 cells), and keeps each
 * row it wrote, in pieces, until its call returns. Fed a database page of
 * 2,000 rows in one call, the page's records and the call's rows outlived the
 * two or three young-generation collections that garbage set off, so all of it
 * was promoted, and the heap grew by some 150 MiB over an export of 200,000
 * rows before a full collection brought it back (the JSON body of the same
 * pages: 2 MiB). Pages of `csvPageSize` records, written `recordsPerCall` at a
 * time, die young: the export's peak is within a few MiB of idle.
 */
export const csvPageSize = 500
const recordsPerCall = 100

/** Records as CSV text (no header), each row ending with CRLF. */
const csvText = <A>(records: ReadonlyArray<A>, toRow: (record: A) => ReadonlyArray<Cell>): string => {
  const parts: Array<string> = []
  for (let start = 0; start < records.length; start += recordsPerCall) {
    const rows = records.slice(start, start + recordsPerCall).map(toRow)
    parts.push(stringify(rows as Array<Array<Cell>>, options))
  }
  return parts.join("")
}

/** A CSV body: the header row, then each batch of records as it arrives. */
export const csvBody = <A, E, R>(
  header: ReadonlyArray<string>,
  toRow: (record: A) => ReadonlyArray<Cell>,
  batches: Stream.Stream<ReadonlyArray<A>, E, R>
): Stream.Stream<Uint8Array, E, R> =>
  Stream.concat(
    Stream.succeed(csvText([header], (cells) => cells)),
    Stream.map(batches, (batch) => csvText(batch, toRow))
  ).pipe(Stream.filter((text) => text.length > 0), Stream.encodeText)

/** A JSON array body, written batch by batch. */
export const jsonArrayBody = <A, E, R>(
  batches: Stream.Stream<ReadonlyArray<A>, E, R>
): Stream.Stream<Uint8Array, E, R> =>
  Stream.suspend(() => {
    let first = true
    const items = Stream.map(batches, (batch) =>
      batch.map((item) => {
        const text = `${first ? "\n" : ",\n"}${JSON.stringify(item)}`
        first = false
        return text
      }).join(""))
    return Stream.succeed("[").pipe(
      Stream.concat(items),
      Stream.concat(Stream.sync(() => (first ? "]\n" : "\n]\n"))),
      Stream.filter((text) => text.length > 0),
      Stream.encodeText
    )
  })
