/**
 * How the embedded model reads hard-wrapped Markdown: sentences split across
 * line breaks are read whole (Intl.Segmenter over re-joined lines) in chunks,
 * summaries and answers, and words are stemmed with Porter's algorithm. The
 * last suite ingests such a document over HTTP and asks about it in chat.
 */
import * as Sdk from "@agent-platform/sdk"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { answerFrom } from "../src/Ai/ExtractiveAnswer.ts"
import { blocks, sentences } from "../src/Ai/Sentences.ts"
import { stem } from "../src/Ai/Words.ts"
import { chunkText, normalizeDocument, summarize } from "../src/Knowledge/Chunking.ts"
import { createKey, layer as testServer, serverSuite, TestServer } from "./TestServer.ts"

/** A returns policy as an editor hard-wraps it at 50 columns. */
const wrapped = [
  "Returns and refunds",
  "===================",
  "",
  "Customers may return any unused item within 30",
  "days of delivery. Items must be in their original",
  "packaging, e.g. the box they came in.",
  "",
  "Refunds are processed within 14 business days",
  "after the returned item reaches our warehouse.",
  "Mr. Ortiz in accounts approves exceptions.",
  "",
  "## Exchanges",
  "",
  "- An exchange ships as soon as the returned item",
  "  is scanned at the warehouse.",
  "- Exchanges are free of charge."
].join("\n")

const refundSentence = "Refunds are processed within 14 business days after the returned item reaches our warehouse."

describe("sentences of hard-wrapped Markdown", () => {
  it("joins the lines of a paragraph or list item, and cuts sentences with Intl.Segmenter", () => {
    assert.deepStrictEqual(sentences(wrapped), [
      "Returns and refunds",
      "Customers may return any unused item within 30 days of delivery.",
      "Items must be in their original packaging, e.g. the box they came in.",
      refundSentence,
      "Mr. Ortiz in accounts approves exceptions.",
      "Exchanges",
      "An exchange ships as soon as the returned item is scanned at the warehouse.",
      "Exchanges are free of charge."
    ])
  })

  it("knows headings (ATX and setext), list items, table rows and code lines", () => {
    const text =
      "Title\n=====\n\n| a | b |\n|---|---|\n\n```\nconst x = 1\n  return x\n```\n\n1. Pack it.\n2. Ship it.\n\n### Notes ###"
    assert.deepStrictEqual(
      blocks(text).map((block) => [block.kind, block.marker, block.text]),
      [
        ["heading", "# ", "Title"],
        ["line", "", "| a | b |"],
        ["line", "", "|---|---|"],
        ["line", "", "const x = 1"],
        ["line", "", "return x"],
        ["item", "1. ", "Pack it."],
        ["item", "2. ", "Ship it."],
        ["heading", "### ", "Notes"]
      ]
    )
  })
})

describe("chunks and summaries", () => {
  it("never cut a chunk inside a wrapped sentence: every chunk holds whole sentences", () => {
    // Long enough for several chunks of ~800 characters.
    const document = normalizeDocument(
      Array.from({ length: 12 }, (_, i) => `## Section ${i}\n\n${wrapped.split("\n").slice(3).join("\n")}`).join("\n\n")
    )
    const chunks = chunkText(document)
    assert.isAbove(chunks.length, 2)
    const whole = new Set(sentences(document))
    for (const chunk of chunks) {
      for (const sentence of sentences(chunk)) assert.isTrue(whole.has(sentence), `a fragment: "${sentence}"`)
    }
    assert.isTrue(chunks.some((chunk) => chunk.includes(refundSentence)))
  })

  it("summarize a document in whole sentences, headings read as sentences", () => {
    assert.strictEqual(
      summarize(normalizeDocument(wrapped)),
      "Returns and refunds. Customers may return any unused item within 30 days of delivery. Items must be in their original packaging, e.g. the box they came in."
    )
  })

  it("cut a first sentence longer than the summary between words, with an ellipsis", () => {
    const long = `${"word ".repeat(80).trim()}.`
    const summary = summarize(long)
    assert.isTrue(summary.endsWith("…"))
    assert.isAtMost(summary.length, 240)
    assert.match(summary, /^(word )+word…$/)
  })
})

describe("answers from hard-wrapped excerpts", () => {
  it("quote the wrapped sentence whole, under its file name", () => {
    const answer = answerFrom("How long does a refund take?", [{ filename: "returns.md", content: wrapped }])
    assert.deepStrictEqual(answer?.sources, ["returns.md"])
    assert.isTrue(answer!.text.startsWith("According to returns.md: "))
    assert.include(answer!.text, refundSentence)
    const whole = new Set(sentences(wrapped))
    for (const quoted of sentences(answer!.text.replace("According to returns.md: ", ""))) {
      assert.isTrue(whole.has(quoted), `a fragment: "${quoted}"`)
    }
  })

  it("match other forms of a word through Porter stems (arrive ~ arrival, delivery ~ deliveries)", () => {
    assert.strictEqual(stem("arrival"), stem("arrives"))
    assert.strictEqual(stem("deliveries"), stem("delivery"))
    const excerpt = {
      filename: "shipping.md",
      content: "International parcels usually have an arrival time\nof ten working days."
    }
    const answer = answerFrom("When will my parcel arrive?", [excerpt])
    assert.strictEqual(
      answer?.text,
      "According to shipping.md: International parcels usually have an arrival time of ten working days."
    )
  })
})

layer(testServer({ CRON_INTERVAL_MS: "300" }), serverSuite)("a hard-wrapped document, over HTTP", (it) => {
  it.effect("is summarized and answered from in whole sentences, citing the file", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* server.admin
      const code = `space-${crypto.randomUUID().slice(0, 8)}`
      const space = yield* admin.api.admin.createSpace({ payload: { code, name: code } })
      const agent = yield* admin.api.agentsAdmin.create({
        payload: { space_id: space.id, name: "Support", summary: "Returns, refunds and exchanges", is_primary: true }
      })
      const { key } = yield* createKey(["chat", "files"], { space_id: space.id, rate_limit_rpm: 10_000 })
      const client = yield* server.client({ apiKey: key })
      const accepted = yield* client.api.knowledge.ingest({
        payload: { agent_id: agent.id, filename: "returns.md", content: wrapped }
      })
      const ready = yield* Sdk.waitUntilReady(client, { agentId: agent.id, fileId: accepted.file_id }, {
        timeout: "60 seconds"
      })
      assert.strictEqual(ready.content_summary, summarize(normalizeDocument(wrapped)))

      const events = yield* Stream.runCollect(
        Sdk.chatStream({ baseUrl: server.baseUrl, apiKey: key }, { message: "How long does a refund take?" })
      ).pipe(Effect.provide(FetchHttpClient.layer))
      const text = [...events].map((event) => ("text" in event ? event.text : "")).join("")
      assert.include(text, refundSentence)
      assert.include(text, "returns.md")
      assert.notMatch(text, /(^|\n|: )after the returned item/)
    }))
})
