/**
 * How uploads wake the ingestion worker (Knowledge/KnowledgeFiles.ts): a lone
 * upload at once; the uploads of a burst with one more wake-up after the
 * spacing (20 ms), not one each — the worker drains the queue until nothing
 * is due, so a wake-up while it works only says "once more". On the test
 * clock, over a repository that stores nothing and a Notifications that
 * records what is published: the policy alone (the end-to-end path, uploads
 * picked up by the worker, is Ingestion.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { ingestTopic, KnowledgeFiles } from "../src/Knowledge/KnowledgeFiles.ts"
import { type FileRow, KnowledgeRepo } from "../src/Knowledge/KnowledgeRepo.ts"
import { Notifications } from "../src/Platform/Notifications.ts"

const published: Array<string> = []

const row = (id: string): FileRow => ({
  id,
  tenant_id: "t",
  agent_id: "a",
  filename: "f.md",
  content_summary: "",
  status: "pending",
  error: null,
  size_bytes: 1,
  chunk_count: 0,
  attempts: 0,
  uploaded_at: new Date(0),
  processed_at: null
})

const StoringNothing = Layer.succeed(
  KnowledgeRepo,
  KnowledgeRepo.of(
    { insertFile: () => Effect.sync(() => row(crypto.randomUUID())) } as unknown as KnowledgeRepo["Service"]
  )
)
const Recording = Layer.succeed(
  Notifications,
  Notifications.of({
    publish: (topic) => Effect.sync(() => void published.push(topic)),
    subscribe: () => Stream.empty
  })
)
const Files = KnowledgeFiles.layer.pipe(Layer.provide([StoringNothing, Recording]))

const upload = Effect.flatMap(KnowledgeFiles, (files) =>
  files.ingest({
    tenantId: crypto.randomUUID(),
    agentId: crypto.randomUUID(),
    filename: "note.md",
    content: "Refunds take 14 days."
  }))

/** Lets the wake-up fiber run what it can now. */
const settle = Effect.andThen(Effect.yieldNow, Effect.yieldNow)

describe("Ingestion wake-ups", () => {
  it.effect("a lone upload wakes the worker at once; a burst costs one more wake-up after the spacing", () =>
    Effect.gen(function*() {
      published.length = 0
      yield* upload
      yield* settle
      assert.deepStrictEqual(published, [ingestTopic], "a lone upload: at once")
      yield* Effect.all([upload, upload, upload, upload], { concurrency: "unbounded" })
      yield* settle
      assert.strictEqual(published.length, 1, "uploads within the spacing wait for it")
      yield* TestClock.adjust("20 millis")
      yield* settle
      assert.strictEqual(published.length, 2, "then one wake-up for all of them")
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.strictEqual(published.length, 2, "nothing more without uploads")
      yield* upload
      yield* settle
      assert.strictEqual(published.length, 3, "after a quiet spell, at once again")
    }).pipe(Effect.provide(Files)))
})
