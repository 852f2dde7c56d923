/**
 * The models behind chat and knowledge: the OpenAI-compatible provider
 * (LanguageModel and EmbeddingModel) against a fake compatible server on
 * loopback — streamed deltas, a tool call assembled from fragments, usage,
 * embeddings, typed errors and retries —, and the embedded models: the
 * hashing embedder, the tokenizer, and the extractive model's answers, tool
 * calls and reports.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Equal, Layer, Option, Redacted, Stream } from "effect"
import * as AiError from "effect/ai/AiError"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import * as EmbeddedLanguageModel from "../src/Ai/EmbeddedLanguageModel.ts"
import * as HashingEmbedder from "../src/Ai/HashingEmbedder.ts"
import * as KnowledgeContext from "../src/Ai/KnowledgeContext.ts"
import type { OpenAiConfig } from "../src/Ai/OpenAiClient.ts"
import * as OpenAiEmbeddingModel from "../src/Ai/OpenAiEmbeddingModel.ts"
import * as OpenAiLanguageModel from "../src/Ai/OpenAiLanguageModel.ts"
import * as TokenCount from "../src/Ai/TokenCount.ts"
import { actionTools } from "../src/Chat/ChatPrompt.ts"

// ---------------------------------------------------------------------------
// A fake OpenAI-compatible server. What it answers depends on the last user
// message, so each test states the scenario in its prompt.

interface Request {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: any
}

const sse = (chunks: ReadonlyArray<unknown>) =>
  chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n"

const delta = (d: unknown, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  model: "gpt-test",
  choices: [{ index: 0, delta: d, finish_reason: finish }]
})

const lastUserText = (body: any): string => {
  const users = (body.messages ?? []).filter((m: any) => m.role === "user")
  return String(users.at(-1)?.content ?? "")
}

const answer = (request: Request, attempt: number): { status: number; type: string; body: string } => {
  const json = (status: number, body: unknown) => ({ status, type: "application/json", body: JSON.stringify(body) })
  if (request.path === "/v1/embeddings") {
    const inputs: Array<string> = request.body.input
    const data = inputs.map((input, index) => ({ object: "embedding", index, embedding: [input.length, index] }))
      .reverse()
    return json(200, { object: "list", data, usage: { prompt_tokens: inputs.join("").length } })
  }
  const text = lastUserText(request.body)
  if (text.includes("unauthorized")) {
    return json(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } })
  }
  if (text.includes("overloaded") && attempt === 1) return json(503, { error: { message: "overloaded" } })
  if (text.includes("always down")) return json(500, { error: { message: "internal" } })
  if (!request.body.stream) {
    return json(200, {
      id: "chatcmpl-2",
      model: "gpt-test",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 12, completion_tokens: 2 }
    })
  }
  const stream = (body: string) => ({ status: 200, type: "text/event-stream", body })
  if (text.includes("garbage")) return stream("data: {not json\n\n")
  if (text.includes("ticket")) {
    return stream(sse([
      delta({
        role: "assistant",
        content: null,
        tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "create_ticket", arguments: "" } }]
      }),
      delta({ tool_calls: [{ index: 0, function: { arguments: "{\"title\": \"Print" } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: "er broken\"}" } }] }),
      delta({}, "tool_calls"),
      { id: "chatcmpl-1", choices: [], usage: { prompt_tokens: 42, completion_tokens: 9 } }
    ]))
  }
  return stream(sse([
    delta({ role: "assistant", content: "" }),
    delta({ content: "Hel" }),
    delta({ content: "lo" }),
    delta({ content: " there" }),
    delta({}, "stop"),
    { id: "chatcmpl-1", choices: [], usage: { prompt_tokens: 12, completion_tokens: 3 } }
  ]))
}

class FakeProvider extends Context.Service<FakeProvider, {
  readonly baseUrl: string
  readonly requests: Array<Request>
}>()("test/FakeProvider") {
  static readonly layer = Layer.effect(
    FakeProvider,
    Effect.acquireRelease(
      Effect.callback<{ server: ReturnType<typeof createServer>; requests: Array<Request> }>((resume) => {
        const requests: Array<Request> = []
        const attempts = new Map<string, number>()
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            const request = {
              path: req.url ?? "",
              headers: req.headers,
              body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
            }
            requests.push(request)
            const key = `${request.path} ${lastUserText(request.body)}`
            attempts.set(key, (attempts.get(key) ?? 0) + 1)
            const { status, type, body } = answer(request, attempts.get(key)!)
            res.writeHead(status, { "content-type": type }).end(body)
          })
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, requests })))
      }),
      ({ server }) =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
        })
    ).pipe(Effect.map(({ server, requests }) => ({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      requests
    })))
  )
}

const config = (baseUrl: string): OpenAiConfig => ({
  baseUrl,
  apiKey: Option.some(Redacted.make("sk-test")),
  model: "gpt-test",
  embeddingModel: "embed-test"
})

/** Runs `use` with the provider's models pointed at the fake server (or at `baseUrl`). */
const withProvider = <A, E>(
  use: Effect.Effect<A, E, LanguageModel.LanguageModel | EmbeddingModel.EmbeddingModel>,
  baseUrl?: string
) =>
  Effect.flatMap(FakeProvider, (fake) =>
    use.pipe(
      Effect.provide(
        Layer.mergeAll(
          OpenAiLanguageModel.layer(config(baseUrl ?? fake.baseUrl)),
          OpenAiEmbeddingModel.layer(config(baseUrl ?? fake.baseUrl))
        ).pipe(Layer.provide(FetchHttpClient.layer))
      )
    ))

/** Streams a response and collects its parts (typed loosely: the tests read them as the provider sent them). */
const collect = (options: {
  readonly prompt: Prompt.RawInput
  readonly toolkit?: ReturnType<typeof actionTools>["toolkit"]
  readonly disableToolCallResolution?: boolean
}) =>
  Effect.flatMap(
    LanguageModel.LanguageModel,
    (model) =>
      Stream.runCollect(model.streamText(options as { prompt: Prompt.RawInput }) as Stream.Stream<any, AiError.AiError>)
  )

const reasonOf = (error: unknown) => (AiError.isAiError(error) ? error.reason._tag : `not an AiError: ${String(error)}`)

layer(FakeProvider.layer, { excludeTestServices: true })("OpenAI-compatible provider", (it) => {
  describe("LanguageModel over /chat/completions", () => {
    it.effect("streams the text deltas in order, then a finish part with the provider's usage", () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider
        const parts = yield* withProvider(
          collect({
            prompt: [{ role: "system", content: "Be brief." }, {
              role: "user",
              content: [{ type: "text", text: "Say hello" }]
            }]
          })
        )
        assert.deepStrictEqual(parts.filter((p) => p.type === "text-delta").map((p) => p.delta), [
          "Hel",
          "lo",
          " there"
        ])
        const finish = parts.find((p) => p.type === "finish")
        assert.strictEqual(finish.reason, "stop")
        assert.strictEqual(finish.usage.inputTokens.total, 12)
        assert.strictEqual(finish.usage.outputTokens.total, 3)
        assert.strictEqual(parts.at(-1).type, "finish")

        const request = fake.requests.at(-1)!
        assert.strictEqual(request.path, "/v1/chat/completions")
        assert.strictEqual(request.headers.authorization, "Bearer sk-test")
        assert.deepInclude(request.body, { model: "gpt-test", stream: true, stream_options: { include_usage: true } })
        assert.deepStrictEqual(request.body.messages, [{ role: "system", content: "Be brief." }, {
          role: "user",
          content: "Say hello"
        }])
        assert.notProperty(request.body, "tools")
      }))

    it.effect("assembles a streamed tool call from its argument fragments, with the tools declared in the request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider
        const tools = actionTools([{
          id: "a1",
          name: "create_ticket",
          description: "Create a support ticket",
          requiresConfirmation: false,
          parameters: [{ name: "title", type: "string", description: "What is wrong", required: true }]
        }])
        const parts = yield* withProvider(collect({
          prompt: "Open a ticket: the printer is broken",
          toolkit: tools.toolkit,
          disableToolCallResolution: true
        }))
        const call = parts.find((p) => p.type === "tool-call")
        assert.deepInclude(call, { id: "call_1", name: "create_ticket", params: { title: "Printer broken" } })
        assert.deepStrictEqual(
          parts.filter((p) => p.type === "tool-params-delta").map((p) => p.delta).join(""),
          "{\"title\": \"Printer broken\"}"
        )
        const finish = parts.find((p) => p.type === "finish")
        assert.deepInclude(finish, { reason: "tool-calls" })
        assert.strictEqual(finish.usage.inputTokens.total, 42)

        const body = fake.requests.at(-1)!.body
        assert.strictEqual(body.tool_choice, "auto")
        assert.deepStrictEqual(body.tools, [{
          type: "function",
          function: {
            name: "create_ticket",
            description: "Create a support ticket",
            parameters: {
              type: "object",
              properties: { title: { type: "string", description: "What is wrong" } },
              required: ["title"],
              additionalProperties: false
            }
          }
        }])
      }))

    it.effect("sends earlier tool calls and their results in the chat-completions format", () =>
      Effect.sync(() => {
        const prompt: Array<Prompt.MessageEncoded> = [
          { role: "user", content: [{ type: "text", text: "open a ticket" }] },
          {
            role: "assistant",
            content: [{
              type: "tool-call",
              id: "call_9",
              name: "create_ticket",
              params: { title: "x" },
              providerExecuted: false
            }]
          },
          {
            role: "tool",
            content: [{
              type: "tool-result",
              id: "call_9",
              name: "create_ticket",
              isFailure: false,
              result: { ticket_id: "T-1" },
              providerExecuted: false
            }]
          }
        ]
        const messages = OpenAiLanguageModel.toMessages(Prompt.make(prompt))
        assert.deepStrictEqual(messages, [
          { role: "user", content: "open a ticket" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_9",
              type: "function",
              function: { name: "create_ticket", arguments: "{\"title\":\"x\"}" }
            }]
          },
          { role: "tool", tool_call_id: "call_9", content: "{\"ticket_id\":\"T-1\"}" }
        ])
      }))

    it.effect("generates text without streaming too", () =>
      Effect.gen(function*() {
        const response = yield* withProvider(
          Effect.flatMap(LanguageModel.LanguageModel, (model) => model.generateText({ prompt: "hello" }))
        )
        assert.strictEqual(response.text, "Hello there")
        assert.strictEqual(response.usage.outputTokens.total, 2)
      }))
  })

  describe("EmbeddingModel over /embeddings", () => {
    it.effect("returns one vector per input, in input order, with the provider's usage", () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider
        const response = yield* withProvider(
          Effect.flatMap(EmbeddingModel.EmbeddingModel, (model) => model.embedMany(["a", "bb", "ccc"]))
        )
        assert.deepStrictEqual(response.embeddings.map((e) => e.vector), [[1, 0], [2, 1], [3, 2]])
        assert.strictEqual(response.usage.inputTokens, 6)
        assert.deepStrictEqual(fake.requests.at(-1)!.body, { model: "embed-test", input: ["a", "bb", "ccc"] })
      }))
  })

  describe("provider errors are typed AiErrors", () => {
    it.effect("a rejected key is an AuthenticationError carrying the provider's message, not retried", () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider
        const before = fake.requests.length
        const error = yield* Effect.flip(withProvider(collect({ prompt: "unauthorized please" })))
        assert.strictEqual(reasonOf(error), "AuthenticationError")
        assert.include((error as AiError.AiError).message, "Incorrect API key provided")
        assert.strictEqual(fake.requests.length - before, 1)
      }))

    it.effect("a transient 503 is retried and the stream then succeeds", () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider
        const before = fake.requests.length
        const parts = yield* withProvider(collect({ prompt: "overloaded, say hello" }))
        assert.deepStrictEqual(parts.filter((p) => p.type === "text-delta").map((p) => p.delta).join(""), "Hello there")
        assert.strictEqual(fake.requests.length - before, 2)
      }))

    it.effect("a provider that keeps failing ends in InternalProviderError after three attempts", () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider
        const before = fake.requests.length
        const error = yield* Effect.flip(withProvider(collect({ prompt: "always down" })))
        assert.strictEqual(reasonOf(error), "InternalProviderError")
        assert.strictEqual(fake.requests.length - before, 3)
      }))

    it.effect("a malformed event is an InvalidResponseError; an unreachable provider a NetworkError", () =>
      Effect.gen(function*() {
        assert.strictEqual(
          reasonOf(yield* Effect.flip(withProvider(collect({ prompt: "garbage" })))),
          "InvalidResponseError"
        )
        const closed = yield* Effect.callback<number>((resume) => {
          const server = createServer()
          server.listen(0, "127.0.0.1", () => {
            const { port } = server.address() as AddressInfo
            server.close(() => resume(Effect.succeed(port)))
          })
        })
        const unreachable = yield* Effect.flip(
          withProvider(collect({ prompt: "hello" }), `http://127.0.0.1:${closed}/v1`)
        )
        assert.strictEqual(reasonOf(unreachable), "NetworkError")
      }))
  })
})

// ---------------------------------------------------------------------------

describe("Hashing embedder (embedded-hashing-v2)", () => {
  it("embeds into 512 dimensions as a unit vector, the same way every time", () => {
    const vector = HashingEmbedder.embedText("Refunds are processed within 14 business days.")
    assert.strictEqual(vector.length, 512)
    assert.strictEqual(HashingEmbedder.dimensions, 512)
    assert.closeTo(Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0)), 1, 1e-9)
    assert.deepStrictEqual(HashingEmbedder.embedText("Refunds are processed within 14 business days."), vector)
  })

  it("puts texts sharing topic words closer than unrelated ones, ignoring case, accents, stopwords and plurals", () => {
    const question = HashingEmbedder.embedText("How long does a refund take?")
    const related = HashingEmbedder.embedText("Refunds take 14 days to arrive.")
    const unrelated = HashingEmbedder.embedText("The cafeteria serves lunch at noon.")
    assert.isAbove(HashingEmbedder.cosine(question, related), HashingEmbedder.cosine(question, unrelated) + 0.2)
    assert.closeTo(
      HashingEmbedder.cosine(HashingEmbedder.embedText("CAFÉ prices"), HashingEmbedder.embedText("the cafe price")),
      1,
      1e-9
    )
  })

  it("counts word order a little (word pairs) and gives a text without topic words the zero vector", () => {
    const a = HashingEmbedder.embedText("dog bites man")
    const b = HashingEmbedder.embedText("man bites dog")
    const similarity = HashingEmbedder.cosine(a, b)
    assert.isBelow(similarity, 0.99)
    assert.isAbove(similarity, 0.6)
    assert.isTrue(HashingEmbedder.embedText("it is what it is").every((x) => x === 0))
  })

  it.effect("is effect's EmbeddingModel, batching and counting input tokens", () =>
    Effect.gen(function*() {
      const model = yield* HashingEmbedder.make
      const response = yield* model.embedMany(["refund policy", "shipping times"])
      assert.deepStrictEqual(response.embeddings[0].vector, HashingEmbedder.embedText("refund policy"))
      // "refund", "policy", "shippi" + "ng", "times"
      assert.strictEqual(response.usage.inputTokens, 5)
      assert.deepStrictEqual((yield* model.embed("shipping times")).vector, HashingEmbedder.embedText("shipping times"))
    }))

  it.effect("answers embedMany with the responses effect's constructor makes, each vector as embedText's", () =>
    Effect.gen(function*() {
      const model = yield* HashingEmbedder.make
      const texts = ["refund policy", "it is what it is", "Café prices"]
      const { embeddings } = yield* model.embedMany(texts)
      texts.forEach((text, i) => {
        const expected = new EmbeddingModel.EmbedResponse({ vector: HashingEmbedder.embedText(text) })
        assert.instanceOf(embeddings[i], EmbeddingModel.EmbedResponse)
        assert.isTrue(Equal.equals(embeddings[i], expected), text)
      })
      assert.deepStrictEqual(
        yield* model.embedMany([]),
        yield* (yield* EmbeddingModel.make({
          embedMany: () => Effect.die("not called for no input")
        })).embedMany([])
      )
    }))

  it.effect("counts the tokens of any text as the embedded tokenizer does", () =>
    Effect.gen(function*() {
      const model = yield* HashingEmbedder.make
      const texts = [
        "Refunds: 14 days (e.g. via card) — or 30!",
        "internationalization\tand\r\nline\vbreaks\f  here...",
        "control\u0001chars\u001fand\u007fdelete",
        "Café prices, naïve façades",
        "",
        "   "
      ]
      for (const text of texts) {
        const response = yield* model.embedMany([text])
        assert.strictEqual(response.usage.inputTokens, TokenCount.countTokens(text), JSON.stringify(text))
      }
    }))
})

describe("Embedded tokenizer", () => {
  it("counts words, long words per six characters, and punctuation", () => {
    assert.strictEqual(TokenCount.countTokens("Hello, world!"), 4)
    assert.strictEqual(TokenCount.countTokens("internationalization"), 4)
    assert.strictEqual(TokenCount.countTokens(""), 0)
    assert.deepStrictEqual(TokenCount.tokenPieces("Hi there."), ["Hi", "there", "."])
  })

  it("counts ASCII text (its own pass) and any other text alike: as many tokens as pieces", () => {
    const texts = [
      "Refunds: 14 days (e.g. via card) -- or 30!",
      "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklm 0123456789012 x",
      "tabs\tand\r\nline\vbreaks\f  here...",
      "control\u0001chars\u001fand\u007fdelete\u0000",
      "trailing word",
      "Café prices, naïve façades",
      "ASCII first, then ünïcödé",
      "日本語のテキスト、句読点。",
      "",
      "   "
    ]
    for (const text of texts) {
      assert.strictEqual(TokenCount.countTokens(text), TokenCount.tokenPieces(text).length, JSON.stringify(text))
    }
  })

  it.effect("is effect's Tokenizer with the same count", () =>
    Effect.gen(function*() {
      const tokens = yield* TokenCount.tokenizer.tokenize("Hello, world!")
      assert.strictEqual(tokens.length, 4)
    }))
})

layer(EmbeddedLanguageModel.layer)("Embedded language model (embedded-extractive-v2)", (it) => {
  const system = KnowledgeContext.render([
    {
      filename: "refunds.md",
      content:
        "# Refunds\n\nRefunds are processed within 14 business days after the item reaches our warehouse. Gift cards cannot be refunded."
    },
    { filename: "office.md", content: "The cafeteria serves lunch from noon to 2 pm on working days." }
  ])
  const ask = (question: string) =>
    Effect.flatMap(
      LanguageModel.LanguageModel,
      (model) =>
        model.generateText({
          prompt: [{ role: "system", content: system }, { role: "user", content: [{ type: "text", text: question }] }]
        })
    )

  it.effect("answers from the knowledge excerpts, quoting the sentence and citing its file", () =>
    Effect.gen(function*() {
      const response = yield* ask("How many days until my refund is processed?")
      assert.strictEqual(
        response.text,
        "According to refunds.md: Refunds are processed within 14 business days after the item reaches our warehouse."
      )
      assert.strictEqual(response.finishReason, "stop")
    }))

  it.effect("says plainly that it does not know when no excerpt covers the question", () =>
    Effect.gen(function*() {
      assert.match((yield* ask("What is the parking policy for visitors?")).text, /^I don't know/)
      assert.match((yield* ask("Tell me about quantum physics")).text, /^I don't know/)
    }))

  it.effect("streams its answer word by word and counts its tokens honestly", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      const prompt: Array<Prompt.MessageEncoded> = [{ role: "system", content: system }, {
        role: "user",
        content: [{ type: "text", text: "When is lunch served in the cafeteria?" }]
      }]
      const parts = yield* Stream.runCollect(model.streamText({ prompt }))
      const deltas = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []))
      const text = deltas.join("")
      assert.strictEqual(text, "According to office.md: The cafeteria serves lunch from noon to 2 pm on working days.")
      assert.isAbove(deltas.length, 10)
      const finish = parts.find((p) => p.type === "finish")!
      assert.strictEqual(finish.usage.outputTokens.total, TokenCount.countTokens(text))
      assert.strictEqual(finish.usage.inputTokens.total, TokenCount.countPromptTokens(Prompt.make(prompt)))
    }))

  it.effect("calls the tool a message asks for, with the parameters the message gives", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      const tools = actionTools([
        {
          id: "a1",
          name: "create_ticket",
          description: "Create a support ticket",
          requiresConfirmation: false,
          parameters: [
            { name: "title", type: "string", description: "", required: true },
            { name: "priority", type: "string", description: "", required: true }
          ]
        },
        {
          id: "a2",
          name: "refund_order",
          description: "Refund an order",
          requiresConfirmation: true,
          parameters: [{ name: "order_id", type: "integer", description: "", required: true }]
        }
      ])
      const call = (text: string) =>
        Effect.map(
          model.generateText({
            prompt: text,
            toolkit: tools.toolkit,
            disableToolCallResolution: true
          }) as unknown as Effect.Effect<
            LanguageModel.GenerateTextResponse<Record<string, any>, "encoded">,
            AiError.AiError
          >,
          (response) => response.toolCalls.map((c) => ({ name: c.name, params: c.params }))
        )
      assert.deepStrictEqual(yield* call("Please create a ticket titled \"Broken printer\", priority: high"), [
        { name: "create_ticket", params: { title: "Broken printer", priority: "high" } }
      ])
      assert.deepStrictEqual(yield* call("refund order #1234 please"), [{
        name: "refund_order",
        params: { order_id: 1234 }
      }])
      assert.deepStrictEqual(yield* call("Can you create a ticket?"), [{ name: "create_ticket", params: {} }])
      // A question about the topic is not a request to act.
      assert.deepStrictEqual(yield* call("How do I create a ticket?"), [])
    }))

  it.effect("reports what an action did from its result", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      const report = (result: unknown, isFailure: boolean) =>
        Effect.map(
          model.generateText({
            prompt: [
              { role: "user", content: [{ type: "text", text: "create a ticket" }] },
              {
                role: "assistant",
                content: [{ type: "tool-call", id: "c1", name: "create_ticket", params: {}, providerExecuted: false }]
              },
              {
                role: "tool",
                content: [{
                  type: "tool-result",
                  id: "c1",
                  name: "create_ticket",
                  isFailure,
                  result,
                  providerExecuted: false
                }]
              }
            ]
          }),
          (response) => response.text
        )
      assert.strictEqual(
        yield* report({
          success: true,
          status_code: 201,
          action_name: "create_ticket",
          response: { ticket_id: "T-7" },
          error: null
        }, false),
        "Done: create_ticket succeeded (status 201). Result: ticket_id: T-7."
      )
      assert.strictEqual(
        yield* report({
          success: false,
          status_code: 502,
          action_name: "create_ticket",
          response: "timeout",
          error: "the remote system timed out"
        }, true),
        "The action create_ticket failed (status 502): the remote system timed out"
      )
    }))
})
