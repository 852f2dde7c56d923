/**
 * The SDK's chat stream when it fails: `chat` (the async iterator for Promise
 * users) rejects with the Promise client's error classes — `_tag`, `status`
 * where an answer came, a one-line `message` — and `chatStream` (Effect)
 * fails with the domain's typed errors or a `ChatStreamError` naming its
 * `reason`. Against the test server, a closed port and local servers that
 * hang, answer something else, or break the stream off.
 */
import type { Chat } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import {
  ApiError,
  ChatStreamBrokenError,
  ConnectionError,
  PlatformError,
  TimeoutError,
  UnexpectedResponse
} from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { spaceWithAgent } from "./Catalog.ts"
import { breakingServer, closedPort, localServer, refusedMessage, timedOutMessage } from "./LocalHttp.ts"
import { createKey, layer as testServer, serverSuite, TestServer } from "./TestServer.ts"

/** Runs a whole turn through `chat`: the events, or what it rejected with. */
const iterate = (options: Sdk.ChatOptions, request: Chat.ChatRequest) =>
  Effect.promise(async () => {
    const events: Array<Chat.ChatEvent> = []
    try {
      for await (const event of Sdk.chat(options, request)) events.push(event)
      return { events, error: undefined }
    } catch (error) {
      return { events, error }
    }
  })

/** A key with the `chat` scope, bound to a space with a primary agent. */
const chatKey = Effect.gen(function*() {
  const { space } = yield* spaceWithAgent({ name: "Support", summary: "Orders, returns and refunds" })
  return (yield* createKey(["chat"], { space_id: space.id, rate_limit_rpm: 10_000 })).key
})

layer(testServer(), serverSuite)("chat: how a failed turn rejects", (it) => {
  describe("an error the API declares, before the stream starts: ApiError", () => {
    it.effect("a key that does not exist: Unauthenticated, 401, the service's message and body", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { events, error } = yield* iterate({ baseUrl: server.baseUrl, apiKey: "sk_live_nope" }, {
          message: "hi"
        })
        assert.deepStrictEqual(events, [])
        assert.instanceOf(error, ApiError)
        assert.instanceOf(error, PlatformError)
        const refused = error as ApiError
        assert.strictEqual(refused._tag, "Unauthenticated")
        assert.strictEqual(refused.status, 401)
        assert.strictEqual(refused.message, "Invalid or revoked API key.")
        assert.deepInclude(refused.body, { _tag: "Unauthenticated", error: "Invalid or revoked API key." })
      }))

    it.effect("a chat_id the key cannot see: NotFound, 404, a message naming it", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const key = yield* chatKey
        const chatId = crypto.randomUUID()
        const { error } = yield* iterate({ baseUrl: server.baseUrl, apiKey: key }, { message: "hi", chat_id: chatId })
        assert.instanceOf(error, ApiError)
        assert.deepInclude(error as object, { _tag: "NotFound", status: 404 })
        assert.strictEqual((error as ApiError).message, `chat ${chatId} not found`)
        assert.deepInclude((error as ApiError).body, { _tag: "NotFound", error: `chat ${chatId} not found` })
      }))
  })

  describe("no answer", () => {
    it.effect("a refused connection: ConnectionError, no status, `cannot reach <url> (ECONNREFUSED)` and what to check", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const { error } = yield* iterate({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "sk_live_x" }, {
          message: "hi"
        })
        assert.instanceOf(error, ConnectionError)
        assert.instanceOf(error, PlatformError)
        assert.deepInclude(error as object, { _tag: "ConnectionError", status: undefined })
        assert.strictEqual(
          (error as ConnectionError).message,
          refusedMessage(`http://127.0.0.1:${port}/v1/chat/completions`)
        )
      }))

    it.effect("an answer that does not start within `timeout`: TimeoutError, no status; the request is abandoned", () =>
      Effect.gen(function*() {
        const silent = yield* localServer(() => "hang")
        const started = Date.now()
        const { error } = yield* iterate({ baseUrl: silent.url, apiKey: "sk_live_x", timeout: "300 millis" }, {
          message: "hi"
        })
        assert.instanceOf(error, TimeoutError)
        assert.deepInclude(error as object, { _tag: "TimeoutError", status: undefined })
        assert.strictEqual(
          (error as TimeoutError).message,
          timedOutMessage("POST", `${silent.url}/v1/chat/completions`, "300ms")
        )
        assert.isBelow(Date.now() - started, 5_000)
        assert.strictEqual(silent.received.length, 1)
      }).pipe(Effect.scoped))

    it.effect("`timeout` bounds the start only: a turn that starts in time streams to the end", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const key = yield* chatKey
        const { events, error } = yield* iterate({ baseUrl: server.baseUrl, apiKey: key, timeout: "10 seconds" }, {
          message: "hello"
        })
        assert.isUndefined(error)
        assert.deepInclude(events[0], { type: "agent_info" })
      }))
  })

  describe("an answer that is not this service's, or a stream that breaks", () => {
    it.effect("another server's error page: UnexpectedResponse with its status", () =>
      Effect.gen(function*() {
        const proxy = yield* localServer(() => ({
          status: 502,
          body: "<html>Bad gateway</html>",
          headers: { "content-type": "text/html" }
        }))
        const { error } = yield* iterate({ baseUrl: proxy.url, apiKey: "sk_live_x" }, { message: "hi" })
        assert.instanceOf(error, UnexpectedResponse)
        assert.deepInclude(error as object, { _tag: "UnexpectedResponse", status: 502 })
        assert.include((error as UnexpectedResponse).message, "is it an Agent Platform service?")
      }).pipe(Effect.scoped))

    it.effect("a 200 that is not an event stream: UnexpectedResponse, 200", () =>
      Effect.gen(function*() {
        const other = yield* localServer(() => ({
          status: 200,
          body: JSON.stringify({ ok: true }),
          headers: { "content-type": "application/json" }
        }))
        const { error } = yield* iterate({ baseUrl: other.url, apiKey: "sk_live_x" }, { message: "hi" })
        assert.instanceOf(error, UnexpectedResponse)
        assert.deepInclude(error as object, { _tag: "UnexpectedResponse", status: 200 })
        assert.include((error as UnexpectedResponse).message, "application/json, not an event stream")
      }).pipe(Effect.scoped))

    it.effect("an event that is not a chat event: ChatStreamBrokenError (`_tag` ChatStreamError), 200, what to do", () =>
      Effect.gen(function*() {
        const odd = yield* localServer(() => ({
          status: 200,
          body: "data: {\"kind\":\"unknown\"}\n\ndata: [DONE]\n\n",
          headers: { "content-type": "text/event-stream" }
        }))
        const { error } = yield* iterate({ baseUrl: odd.url, apiKey: "sk_live_x" }, { message: "hi" })
        assert.instanceOf(error, ChatStreamBrokenError)
        assert.instanceOf(error, PlatformError)
        assert.deepInclude(error as object, { _tag: "ChatStreamError", status: 200 })
        assert.strictEqual(
          (error as ChatStreamBrokenError).message,
          `not a chat event from ${odd.url}/v1/chat/completions: "{\\"kind\\":\\"unknown\\"}"; the service may be newer than this SDK: update @agent-platform/sdk`
        )
      }).pipe(Effect.scoped))

    it.effect("a stream that breaks off after its first event: the event, then ChatStreamBrokenError", () =>
      Effect.gen(function*() {
        const breaking = yield* breakingServer(
          "text/event-stream",
          `data: ${JSON.stringify({ type: "agent_info", agent_id: "a1", chat_id: "c1" })}\n\n`
        )
        const { events, error } = yield* iterate({ baseUrl: breaking.url, apiKey: "sk_live_x" }, { message: "hi" })
        assert.deepStrictEqual(events, [{ type: "agent_info", agent_id: "a1", chat_id: "c1" }])
        assert.instanceOf(error, ChatStreamBrokenError)
        assert.deepInclude(error as object, { _tag: "ChatStreamError", status: 200 })
        assert.match(
          (error as ChatStreamBrokenError).message,
          /^the chat stream from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions broke off \(.+\): the answer is incomplete; /
        )
      }).pipe(Effect.scoped))
  })

  describe("chatStream, for Effect users", () => {
    it.effect("fails with the domain's typed error, or a ChatStreamError whose reason and message say what happened", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const run = (options: Sdk.ChatOptions) =>
          Stream.runCollect(Sdk.chatStream(options, { message: "hi" })).pipe(
            Effect.flip,
            Effect.provide(FetchHttpClient.layer)
          )
        const unauthenticated = yield* run({ baseUrl: server.baseUrl, apiKey: "sk_live_nope" })
        assert.strictEqual(unauthenticated._tag, "Unauthenticated")
        assert.strictEqual((unauthenticated as { readonly error: string }).error, "Invalid or revoked API key.")

        const port = yield* closedPort
        const refused = yield* run({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "sk_live_x" })
        assert.instanceOf(refused, Sdk.ChatStreamError)
        const broken = refused as Sdk.ChatStreamError
        assert.strictEqual(broken.reason, "Unreachable")
        assert.isUndefined(broken.status)
        assert.strictEqual(
          broken.message,
          refusedMessage(`http://127.0.0.1:${port}/v1/chat/completions`)
        )
        assert.strictEqual(broken.error, broken.message)

        const silent = yield* localServer(() => "hang")
        const late = yield* run({ baseUrl: silent.url, apiKey: "sk_live_x", timeout: "200 millis" })
        assert.deepInclude(late as object, { _tag: "ChatStreamError", reason: "Timeout" })
        assert.strictEqual(
          late.message,
          timedOutMessage("POST", `${silent.url}/v1/chat/completions`, "200ms")
        )
      }).pipe(Effect.scoped))
  })
})
