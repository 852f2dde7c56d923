/**
 * The JSON log writer: the same lines as effect's `Logger.formatJson`, written
 * in batches (20 ms or 64 KiB), with secrets still redacted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Redacted } from "effect"
import {
  directBuffer,
  formatPlainEntry,
  formatRequestEntry,
  isoTimestamp,
  makeJsonLogger,
  makeLineBuffer
} from "../src/Platform/LogWriter.ts"

/** Runs `program` with a JSON logger over a buffer that records each write. */
const capture = <A>(program: Effect.Effect<A>) =>
  Effect.gen(function*() {
    const writes: Array<string> = []
    const buffer = makeLineBuffer((bytes) => writes.push(bytes.toString("utf8")))
    const effectLines: Array<string> = []
    const reference = Logger.make((options) => effectLines.push(Logger.formatJson.log(options)))
    yield* program.pipe(Effect.provide(Logger.layer([makeJsonLogger(buffer), reference])))
    return { writes, buffer, effectLines }
  })

const requestLog = Effect.logInfo("request").pipe(
  Effect.annotateLogs({
    request_id: "r-1",
    method: "GET",
    path: "/v1/agents",
    status: 200,
    duration_ms: 1.5,
    tenant_id: null
  })
)

describe("LogWriter", () => {
  it.effect("writes what Logger.formatJson writes, a line per entry", () =>
    Effect.gen(function*() {
      const { writes, buffer, effectLines } = yield* capture(Effect.all([
        requestLog,
        Effect.logWarning("two", "parts"),
        Effect.logError("with a cause", new Error("boom")).pipe(Effect.withLogSpan("span"))
      ]))
      buffer.flushSync()
      const lines = writes.join("").split("\n").filter((line) => line.length > 0)
      assert.strictEqual(lines.length, 3)
      for (let i = 0; i < lines.length; i++) {
        const ours = JSON.parse(lines[i])
        const theirs = JSON.parse(effectLines[i])
        // Same fields and values; only the span's elapsed milliseconds may differ by the moment each logger read the clock.
        assert.deepStrictEqual({ ...ours, spans: Object.keys(ours.spans) }, {
          ...theirs,
          spans: Object.keys(theirs.spans)
        })
      }
      assert.deepInclude(JSON.parse(lines[0]), {
        message: "request",
        level: "INFO",
        annotations: {
          request_id: "r-1",
          method: "GET",
          path: "/v1/agents",
          status: 200,
          duration_ms: 1.5,
          tenant_id: null
        }
      })
    }))

  it.effect("batches the lines of the next 20 ms into one write", () =>
    Effect.gen(function*() {
      const { writes } = yield* capture(Effect.all(Array.from({ length: 50 }, () => requestLog)))
      assert.strictEqual(writes.length, 0, "nothing is written at once")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.strictEqual(writes.length, 0, "nor at the end of the event-loop turn")
      const deadline = Date.now() + 5_000
      while (writes.length === 0 && Date.now() < deadline) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
      assert.strictEqual(writes.length, 1)
      assert.strictEqual(writes[0].split("\n").length - 1, 50)
    }))

  it("writes at once when 64 KiB are waiting", () => {
    const writes: Array<string> = []
    const buffer = makeLineBuffer((bytes) => writes.push(bytes.toString("utf8")))
    const line = `${"x".repeat(1023)}\n`
    for (let i = 0; i < 63; i++) buffer.append(line)
    assert.strictEqual(writes.length, 0)
    buffer.append(line)
    assert.strictEqual(writes.length, 1, "the 64th KiB writes the batch")
    assert.strictEqual(writes[0].length, 64 * 1024)
  })

  it("keeps every byte of lines of any length and script, in order", () => {
    const writes: Array<Buffer> = []
    const buffer = makeLineBuffer((bytes) => writes.push(Buffer.from(bytes)))
    const lines = [
      "short\n",
      `${"é".repeat(30_000)}\n`, // 60,000 bytes: the batch's next line no longer fits by the quick bound
      `${"€".repeat(25_000)}\n`, // 75,000 bytes, past the 64 KiB flush
      `${"x".repeat(200_000)}\n`, // longer than a whole batch: written on its own
      "🎉 after\n"
    ]
    for (const line of lines) buffer.append(line)
    buffer.flushSync()
    assert.strictEqual(Buffer.concat(writes).toString("utf8"), lines.join(""))
    assert.isAbove(writes.length, 2, "the long lines were written in several batches")
    for (const bytes of writes.slice(0, -1)) assert.isAtLeast(bytes.length, 6)
  })

  it("writes timestamps as Date's toISOString does", () => {
    const times = [
      0,
      999,
      1000,
      Date.UTC(2026, 10, 28, 23, 59, 59, 999),
      Date.UTC(2026, 10, 29),
      Date.UTC(2028, 1, 29, 12, 0, 0, 7),
      -1,
      -1001,
      1.5,
      8.64e15,
      253402300799999,
      253402300800000
    ]
    // The same second again, then another, then back: the cached second must not leak into the next.
    for (
      const millis of [
        ...times,
        ...times.slice().reverse(),
        ...Array.from({ length: 3000 }, (_, i) => 1_800_000_000_000 + i * 7)
      ]
    ) {
      assert.strictEqual(isoTimestamp(millis), new Date(millis).toISOString(), String(millis))
    }
  })

  // The request id, method and tenant id are the edge's (checked or generated, see formatRequestEntry).
  it("formats the request line as the generic plain entry does", () => {
    const date = new Date("2026-11-27T17:00:00.123Z")
    for (
      const fields of [
        {
          request_id: "r-1",
          method: "GET",
          path: "/v1/agents",
          status: 200,
          duration_ms: 1.5,
          tenant_id: "8b0f3c2e-7a11-4b7c-9f0e-aaaaaaaaaaaa"
        },
        {
          request_id: "r-2",
          method: "POST",
          path: "/v1/\"odd\\path\u2028é",
          status: 404,
          duration_ms: 0,
          tenant_id: null
        },
        {
          // Every printable ASCII character but the two JSON escapes, then a control character; a non-finite number.
          request_id: "r-3",
          method: "GET",
          path: "/ !#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~\u0001",
          status: 200,
          duration_ms: Number.NaN,
          tenant_id: "8b0f3c2e-7a11-4b7c-9f0e-bbbbbbbbbbbb"
        },
        {
          // Every character a checked request id may hold.
          request_id: "AZaz09._:-",
          method: "DELETE",
          path: "/",
          status: 204,
          duration_ms: 12.3,
          tenant_id: null
        }
      ]
    ) {
      for (const level of ["Info", "Debug"] as const) {
        assert.strictEqual(
          formatRequestEntry(level, date.getTime(), fields, 42),
          formatPlainEntry("request", level, date, fields, 42)
        )
      }
    }
  })

  it.effect("redacts secrets in annotations and messages", () =>
    Effect.gen(function*() {
      const { writes, buffer } = yield* capture(
        Effect.logInfo("sign in", Redacted.make("hunter2")).pipe(
          Effect.annotateLogs({ password: Redacted.make("hunter2") })
        )
      )
      buffer.flushSync()
      assert.notInclude(writes.join(""), "hunter2")
      assert.include(writes.join(""), "<redacted>")
    }))

  it.effect("a line written directly to the only JSON logger's buffer is the line that logger writes", () =>
    Effect.gen(function*() {
      const effectLines: Array<string> = []
      const reference = Logger.make((options) => effectLines.push(Logger.formatJson.log(options)))
      const writes: Array<string> = []
      const buffer = makeLineBuffer((bytes) => writes.push(bytes.toString("utf8")))
      const logger = makeJsonLogger(buffer)
      assert.strictEqual(directBuffer(new Set([logger])), buffer)
      assert.isUndefined(directBuffer(new Set([logger, reference])), "two loggers: the pipeline writes to both")
      assert.isUndefined(directBuffer(new Set([reference])), "not ours: the pipeline writes")
      yield* requestLog.pipe(Effect.provide(Logger.layer([reference])))
      const theirs = JSON.parse(effectLines[0])
      buffer.append(
        `${
          formatPlainEntry(
            "request",
            "Info",
            new Date(theirs.timestamp),
            theirs.annotations,
            Number(theirs.fiberId.slice(1))
          )
        }\n`
      )
      buffer.flushSync()
      assert.deepStrictEqual(JSON.parse(writes.join("")), theirs)
      assert.strictEqual(writes.join(""), `${effectLines[0]}\n`, "the same text, key order included")
    }))
})
