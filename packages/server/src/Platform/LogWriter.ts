/**
 * The JSON log writer: the same one-object-per-line output as effect's
 * `Logger.consoleJson` (`message`, `level`, `timestamp`, `cause`,
 * `annotations`, `spans`, `fiberId`), made cheap enough to log every request.
 *
 * - Entries whose message and annotations are plain strings, numbers,
 *   booleans or null are serialized with one `JSON.stringify` (the request
 *   log line of the HTTP edge field by field: {@link formatRequestEntry});
 *   anything else goes through effect's own formatter, which redacts
 *   `Redacted` values and survives circular structures.
 * - Lines are encoded into a byte buffer as they come and written to stdout
 *   together at most 20 ms after the first of them (or as soon as 64 KiB are
 *   waiting), in one `write` instead
 *   of a `console.log` call and a system call per line. Once per event-loop
 *   turn was too often under load: a busy server turns its loop every few
 *   requests, and each write costs a trip to the thread pool and back
 *   (measured: ~8 % of the CPU of `GET /v1/agents`). When stdout is a file
 *   (Node writes files synchronously), the write runs on libuv's thread pool,
 *   one at a time and in order, and what arrives meanwhile waits for the next
 *   one, so the event loop never waits for the disk. What is still buffered is
 *   written synchronously when the process exits.
 */
import { Logger } from "effect"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import { fstatSync, writeSync, writev } from "node:fs"

const flushAtBytes = 64 * 1024

/** How long a line may wait for others before the batch is written. */
export const flushAfterMs = 20

const isPlain = (value: unknown): boolean =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean"

const levelNames: Record<LogLevel.LogLevel, string> = {
  All: "ALL",
  Fatal: "FATAL",
  Error: "ERROR",
  Warn: "WARN",
  Info: "INFO",
  Debug: "DEBUG",
  Trace: "TRACE",
  None: "NONE"
}

/** Lines waiting for the next write to stdout. */
export interface LineBuffer {
  readonly append: (line: string) => void
  /** Writes what is waiting, synchronously. */
  readonly flushSync: () => void
}

/**
 * A buffer handing what waits to `write` {@link flushAfterMs} after the first
 * line, or at 64 KiB. Each line is encoded into the batch's bytes as it is
 * appended, so the line's string dies young: strings kept waiting for 20 ms
 * survive the young generation's collections and are copied by each (a
 * request log line is a tree of some twenty string pieces until flattened),
 * which measured ~4 µs per logged request under load, more than formatting
 * the line. `write` owns the bytes it is given.
 */
export const makeLineBuffer = (write: (bytes: Buffer) => void): LineBuffer => {
  // Room for a batch plus the line that completes it: a line of up to 64 KiB / 3 characters always fits.
  const capacity = 2 * flushAtBytes
  let chunk = Buffer.allocUnsafeSlow(capacity)
  let used = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const flushSync = () => {
    // A batch written early (64 KiB, exit) takes its timer with it: the next line starts a new one.
    clearTimeout(timer)
    timer = undefined
    if (used === 0) return
    const bytes = chunk.subarray(0, used)
    chunk = Buffer.allocUnsafeSlow(capacity)
    used = 0
    write(bytes)
  }
  return {
    append: (line) => {
      // UTF-8 takes at most 3 bytes per UTF-16 unit: only a very long line needs its exact length.
      if (line.length * 3 > capacity - used && Buffer.byteLength(line) > capacity - used) {
        flushSync()
        // Longer than a whole batch: written on its own.
        if (Buffer.byteLength(line) > capacity) return write(Buffer.from(line))
      }
      used += chunk.write(line, used)
      if (used >= flushAtBytes) return flushSync()
      // Unreferenced: a pending batch does not keep the process alive (exit writes it synchronously).
      timer ??= setTimeout(flushSync, flushAfterMs).unref()
    },
    flushSync
  }
}

/** A plain value of a log entry: written as is by `JSON.stringify`. */
export type PlainValue = string | number | boolean | null

/**
 * The JSON line of an entry without cause or spans whose message and
 * annotations are plain values: the text `JSON.stringify` makes of
 * `{message, level, timestamp, annotations, spans: {}, fiberId}`, with only
 * the message and the annotations serialized (the rest needs no escaping).
 */
export const formatPlainEntry = (
  message: PlainValue,
  logLevel: LogLevel.LogLevel,
  date: Date,
  annotations: Readonly<Record<string, unknown>>,
  fiberId: number
): string =>
  `{"message":${JSON.stringify(message)},"level":"${
    levelNames[logLevel]
  }","timestamp":"${date.toISOString()}","annotations":${
    JSON.stringify(annotations)
  },"spans":{},"fiberId":"#${fiberId}"}`

/** The fields of the HTTP edge's request log line, in the order the line lists them. */
export type RequestLogFields = {
  readonly request_id: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly duration_ms: number
  readonly tenant_id: string | null
}

/** The second of the last timestamp formatted, and its text up to the milliseconds (`2026-11-28T03:00:00.`). */
let isoSecond = Number.NaN
let isoSecondText = ""
const millisText = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, "0")}Z`)

/**
 * A time as `Date.prototype.toISOString` writes it: a busy server writes many
 * lines within one second, and only their milliseconds differ (formatting a
 * `Date` for each costs more than the rest of the line).
 */
export const isoTimestamp = (millis: number): string => {
  const ms = millis % 1000
  const msText = millisText[ms]
  // Before 1970 (a negative remainder), a fraction, or past year 9999: Date's own text.
  if (msText === undefined || millis >= 253402300800000) return new Date(millis).toISOString()
  const second = millis - ms
  if (second !== isoSecond) {
    isoSecondText = new Date(second).toISOString().slice(0, 20)
    isoSecond = second
  }
  return isoSecondText + msText
}

/**
 * The request log line: the text {@link formatPlainEntry} writes for the
 * message `request` with `fields` as the only annotations, written field by
 * field (the request log runs for every request; a generic `JSON.stringify`
 * of the annotations and a new `Date` per line cost several microseconds).
 * The request id, the method and the tenant id go in as they are: the edge
 * passes only request ids it generated or checked
 * (`[A-Za-z0-9._:-]`), methods Node's parser accepted (HTTP tokens of its
 * fixed list) and tenant ids of the database (UUIDs) — none holds a
 * character JSON escapes. The path, the caller's text, is escaped as needed.
 */
export const formatRequestEntry = (
  logLevel: LogLevel.LogLevel,
  millis: number,
  fields: RequestLogFields,
  fiberId: number
): string =>
  `{"message":"request","level":"${levelNames[logLevel]}","timestamp":"${
    isoTimestamp(millis)
  }","annotations":{"request_id":"${fields.request_id}","method":"${fields.method}","path":${
    jsonString(fields.path)
  },"status":${jsonNumber(fields.status)},"duration_ms":${jsonNumber(fields.duration_ms)},"tenant_id":${
    fields.tenant_id === null ? "null" : `"${fields.tenant_id}"`
  }},"spans":{},"fiberId":"#${fiberId}"}`

/** Printable ASCII but `"` and `\`: characters a JSON string holds as they are. */
const verbatimInJson = /^[ !#-[\]-~]*$/

/**
 * A string as JSON: quoted as it is when it needs no escaping (request ids,
 * methods, paths and tenant ids nearly always), else by `JSON.stringify`.
 */
const jsonString = (value: string): string => verbatimInJson.test(value) ? `"${value}"` : JSON.stringify(value)

/** A number as JSON: `null` when it is not finite, as `JSON.stringify` writes it. */
const jsonNumber = (value: number): string => Number.isFinite(value) ? String(value) : "null"

/** Whether every value of a record is plain (then {@link formatPlainEntry} writes it). */
export const allPlain = (record: Readonly<Record<string, unknown>>): boolean => {
  for (const key in record) {
    if (!isPlain(record[key])) return false
  }
  return true
}

/** The structured JSON of one entry, as `Logger.formatJson` writes it. */
export const formatEntry = (options: Logger.Options<unknown>): string => {
  const message = options.message
  const single = Array.isArray(message) && message.length === 1 ? message[0] : message
  const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
  const spans = options.fiber.getRef(References.CurrentLogSpans)
  if (!isPlain(single) || options.cause.reasons.length > 0 || spans.length > 0 || !allPlain(annotations)) {
    return Logger.formatJson.log(options)
  }
  return formatPlainEntry(single as PlainValue, options.logLevel, options.date, annotations, options.fiber.id)
}

/** The buffer of each JSON logger made here, for writers that skip the logger pipeline (see {@link directBuffer}). */
const buffers = new WeakMap<Logger.Logger<unknown, any>, LineBuffer>()

/** The JSON logger writing through `buffer`. */
export const makeJsonLogger = (buffer: LineBuffer): Logger.Logger<unknown, void> => {
  const logger = Logger.make((options) => buffer.append(`${formatEntry(options)}\n`))
  buffers.set(logger, buffer)
  return logger
}

/**
 * When a fiber logs through exactly one JSON logger of this module, its line
 * buffer: an entry appended there is the line that logger would have written
 * (with {@link formatPlainEntry}), without building the logger's options. The
 * request log of the HTTP edge is written this way.
 */
export const directBuffer = (loggers: ReadonlySet<Logger.Logger<unknown, any>>): LineBuffer | undefined => {
  if (loggers.size !== 1) return undefined
  for (const logger of loggers) return buffers.get(logger)
  return undefined
}

/**
 * Writes to a file descriptor on the thread pool, one `writev` at a time and
 * in order; `flushSync` writes what waits directly (at exit).
 */
const makeFileWriter = (fd: number) => {
  let waiting: Array<Buffer> = []
  let busy = false
  const next = () => {
    if (waiting.length === 0) return void (busy = false)
    const batches = waiting
    waiting = []
    busy = true
    writev(fd, batches, (error) => {
      // The file cannot be written (disk full, closed): the lines are lost, the service goes on.
      void error
      next()
    })
  }
  return {
    write: (bytes: Buffer) => {
      waiting.push(bytes)
      if (!busy) next()
    },
    flushSync: () => {
      const batches = waiting
      waiting = []
      try {
        for (const bytes of batches) writeSync(fd, bytes)
      } catch {
        // stdout is closed: the lines cannot be written anywhere.
      }
    }
  }
}

const stdoutIsFile = () => {
  try {
    return fstatSync(1).isFile()
  } catch {
    return false
  }
}

/** Stdout's one buffer: every logger of the process shares it, and it is written out when the process exits. */
let stdoutBuffer: LineBuffer | undefined
const sharedStdoutBuffer = () => {
  if (stdoutBuffer === undefined) {
    let exiting = false
    const file = stdoutIsFile() ? makeFileWriter(1) : undefined
    const buffer = makeLineBuffer((bytes) => {
      if (exiting) {
        file?.flushSync()
        try {
          // At exit nothing asynchronous runs any more: write directly.
          writeSync(1, bytes)
        } catch {
          // stdout is closed: the lines cannot be written anywhere.
        }
        return
      }
      if (file !== undefined) return file.write(bytes)
      process.stdout.write(bytes)
    })
    process.on("exit", () => {
      exiting = true
      buffer.flushSync()
      file?.flushSync()
    })
    stdoutBuffer = buffer
  }
  return stdoutBuffer
}

/** JSON lines on stdout, written in batches ({@link flushAfterMs}, 64 KiB); replaces `Logger.consoleJson`. */
export const jsonStdoutLogger = (): Logger.Logger<unknown, void> => makeJsonLogger(sharedStdoutBuffer())
