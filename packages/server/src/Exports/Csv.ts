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

/** Rows as CSV text (no header), each row ending with CRLF. */
export const csvRows = (rows: ReadonlyArray<ReadonlyArray<Cell>>): string =>
  rows.length === 0 ? "" : stringify(rows as Array<Array<Cell>>, options)

/** A CSV body: the header row, then each batch of records as it arrives. */
export const csvBody = <A, E, R>(
  header: ReadonlyArray<string>,
  toRow: (record: A) => ReadonlyArray<Cell>,
  batches: Stream.Stream<ReadonlyArray<A>, E, R>
): Stream.Stream<Uint8Array, E, R> =>
  Stream.concat(
    Stream.succeed(csvRows([header])),
    Stream.map(batches, (batch) => csvRows(batch.map(toRow)))
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
