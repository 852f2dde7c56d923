/**
 * How commands print results: the API's body as JSON for scripts (`--json`),
 * aligned columns for people, and text written as it arrives (chat tokens,
 * progress lines).
 */
import { Console, Effect, Schema, Stdio, Stream } from "effect"

/** Prints a value as indented JSON. */
export const json = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, null, 2))

/**
 * Makes text from the server safe to print: control characters (escape
 * sequences, line breaks) in a name could otherwise rewrite the terminal or
 * break a table's lines.
 */
export const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")

/**
 * Like {@link printable}, for running text: line breaks and tabs are kept,
 * other control characters replaced.
 */
export const printableText = (text: string): string =>
  text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (char) => (char === "\r" ? "" : "?"))

/** Standard output was closed under the command (`| head`, a closed terminal). */
export class OutputClosed extends Schema.TaggedError<OutputClosed>()("OutputClosed", { message: Schema.String }) {}

/** Writes text to standard output as it is, without adding a line break. */
export const write = (text: string): Effect.Effect<void, OutputClosed, Stdio.Stdio> =>
  Effect.gen(function*() {
    const stdio = yield* Stdio.Stdio
    yield* Stream.run(Stream.succeed(text), stdio.stdout())
  }).pipe(
    Effect.mapError((cause) => new OutputClosed({ message: `cannot write to standard output: ${cause.message}` }))
  )

/** Prints a value as one line of JSON (a stream of events, one per line). */
export const jsonLine = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value))

/** A column: its header and how to render a row's cell. */
export type Column<Row> = readonly [header: string, cell: (row: Row) => string]

/** Prints rows under upper-case headers, each column as wide as its widest cell. */
export const table = <Row>(columns: ReadonlyArray<Column<Row>>, rows: ReadonlyArray<Row>): Effect.Effect<void> => {
  const lines = [
    columns.map(([header]) => header.toUpperCase()),
    ...rows.map((row) => columns.map(([, cell]) => printable(cell(row))))
  ]
  const widths = columns.map((_, index) => Math.max(...lines.map((line) => line[index].length)))
  return Console.log(
    lines.map((line) => line.map((text, index) => text.padEnd(widths[index])).join("  ").trimEnd()).join("\n")
  )
}

/** Prints label/value pairs, one per line, values aligned. */
export const fields = (pairs: ReadonlyArray<readonly [label: string, value: string]>): Effect.Effect<void> => {
  const width = Math.max(...pairs.map(([label]) => label.length))
  return Console.log(pairs.map(([label, value]) => `${label.padEnd(width)}  ${printable(value)}`).join("\n"))
}

/** A nullable value, or `-`. */
export const orDash = (value: string | number | null | undefined): string =>
  value === null || value === undefined ? "-" : String(value)

/** A flag's value in a table: `yes` or `no`. */
export const yesNo = (value: boolean): string => (value ? "yes" : "no")

/** An ISO 8601 timestamp to the minute, in UTC (`2026-01-31 14:05`), or `-`. */
export const minute = (iso: string | null | undefined): string =>
  iso === null || iso === undefined ? "-" : iso.replace("T", " ").slice(0, 16)
