/**
 * The SDK's room frames (`roomEventsStream`, `roomEvents`): over the
 * WebSocket, over long polling, falling back to long polling behind a proxy
 * that refuses upgrades, ending with the room's close, and failing with the
 * API's typed errors. `roomEvents` (Promise users) rejects with the Promise
 * client's error classes — `_tag`, `status` where an answer came, a one-line
 * `message` — against the test server, a closed port and a WebSocket server
 * that breaks off or sends something else.
 */
import type { Rooms } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import { ApiError, ConnectionError, PlatformError, RoomEventsBrokenError } from "@agent-platform/sdk"
import * as NodeWS from "@effect/platform-node/NodeWS"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Socket from "effect/socket/Socket"
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocketServer } from "ws"
import { closedPort, refusedMessage } from "./LocalHttp.ts"
import { anaAndBoInARoom, eventually, person } from "./RoomsFixtures.ts"
import { layer as testServer, serverSuite, TestServer } from "./TestServer.ts"

/** A reverse proxy to the test server that forwards plain HTTP and drops WebSocket upgrades, as some proxies do. */
const upgradeRefusingProxy = Effect.acquireRelease(
  Effect.gen(function*() {
    const target = new URL((yield* TestServer).baseUrl)
    return yield* Effect.callback<
      { readonly url: string; readonly upgrades: Array<string>; readonly close: () => void }
    >((resume) => {
      const upgrades: Array<string> = []
      const server = createServer((incoming, outgoing) => {
        const forwarded = request(
          {
            host: target.hostname,
            port: target.port,
            path: incoming.url,
            method: incoming.method,
            headers: incoming.headers
          },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(outgoing)
          }
        )
        incoming.pipe(forwarded)
      })
      server.on("upgrade", (incoming, socket) => {
        upgrades.push(incoming.url ?? "")
        socket.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          upgrades,
          close: () => server.close()
        })))
    })
  }),
  (proxy) => Effect.sync(proxy.close)
)

/** A WebSocket server that sends each of `texts` on connect, then closes with `code`. */
const scriptedSocketServer = (texts: ReadonlyArray<string>, code: number) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = new WebSocketServer({ host: "127.0.0.1", port: 0 })
      server.on("connection", (socket) => {
        for (const text of texts) socket.send(text)
        setTimeout(() => socket.close(code, "going away"), 50)
      })
      server.on("listening", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          close: () => {
            for (const client of server.clients) client.terminate()
            server.close()
          }
        })))
    }),
    (server) => Effect.sync(server.close)
  )

/** The frames `roomEvents` delivered, and what it rejected with. */
const iterate = (options: Sdk.RoomEventsOptions, chatId: string) =>
  Effect.promise(async () => {
    const frames: Array<Rooms.PollFrame> = []
    try {
      for await (const frame of Sdk.roomEvents(options, chatId)) frames.push(frame)
      return { frames, error: undefined }
    } catch (error) {
      return { frames, error }
    }
  })

const run = <A, E>(stream: Stream.Stream<A, E, HttpClient.HttpClient | Socket.WebSocketConstructor>) =>
  Stream.runCollect(stream).pipe(
    Effect.provide(FetchHttpClient.layer),
    Effect.provide(NodeWS.layerWebSocketConstructor)
  )

const contents = (frames: ReadonlyArray<Rooms.PollFrame>) => frames.flatMap((f) => f.messages.map((m) => m.content))

/** A room with Ana (whose token the SDK uses) and Bo, and the SDK options for Ana. */
const conversation = Effect.gen(function*() {
  const { ana, bo, room } = yield* anaAndBoInARoom
  const say = (content: string) =>
    bo.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content } })
  yield* say("first")
  const sessionToken = (yield* ana.client.sessionToken)!
  const { baseUrl } = yield* TestServer
  return { ana, bo, room, say, options: { baseUrl, sessionToken } }
}).pipe(Effect.orDie)

layer(testServer(), serverSuite)("SDK room frames", (it) => {
  describe("roomEventsStream", () => {
    it.effect("over the WebSocket: every message once, in order, until the close", () =>
      Effect.gen(function*() {
        const c = yield* conversation
        const collecting = yield* run(Sdk.roomEventsStream({ ...c.options, transport: "websocket" }, c.room.chat_id))
          .pipe(Effect.forkChild)
        yield* eventually(c.ana.client.api.roomChats.poll({ params: { id: c.room.chat_id }, query: {} }), (f) =>
          f.presence.some((p) => p.user_id === c.ana.id && p.state === "online"))
        yield* c.say("second")
        yield* c.say("third")
        yield* c.bo.client.api.rooms.close({ params: { id: c.room.id } })
        const frames = yield* Fiber.join(collecting)
        assert.deepStrictEqual(contents(frames).slice(0, 3), ["first", "second", "third"])
        assert.strictEqual(frames.at(-1)!.room_status, "closed")
        assert.isTrue(frames.at(-1)!.messages.some((m) =>
          m.author_name === "Summary"
        ))
        const seqs = frames.flatMap((f) => f.messages.map((m) => m.seq))
        assert.deepStrictEqual(seqs, seqs.map((_, i) => i + 1))
      }))

    it.effect("falls back to long polling behind a proxy that refuses WebSocket upgrades, from the cursor it reached", () =>
      Effect.gen(function*() {
        const c = yield* conversation
        const proxy = yield* upgradeRefusingProxy
        const collecting = yield* run(
          Sdk.roomEventsStream({ ...c.options, baseUrl: proxy.url, pollWait: 5 }, c.room.chat_id)
        ).pipe(Effect.forkChild)
        yield* eventually(Effect.sync(() => proxy.upgrades.length), (n) => n === 1)
        yield* c.say("second")
        yield* c.bo.client.api.rooms.close({ params: { id: c.room.id } })
        const frames = yield* Fiber.join(collecting)
        assert.deepStrictEqual(contents(frames).slice(0, 2), ["first", "second"])
        assert.strictEqual(frames.at(-1)!.room_status, "closed")
        const seqs = frames.flatMap((f) => f.messages.map((m) => m.seq))
        assert.deepStrictEqual(seqs, seqs.map((_, i) => i + 1))
      }))

    it.effect("fails with the API's typed error for a non-participant, over either transport", () =>
      Effect.gen(function*() {
        const c = yield* conversation
        const stranger = yield* person("Stranger")
        const options = { baseUrl: c.options.baseUrl, sessionToken: (yield* stranger.client.sessionToken)! }
        for (const transport of ["auto", "poll"] as const) {
          const error = yield* run(Sdk.roomEventsStream({ ...options, transport }, c.room.chat_id)).pipe(Effect.flip)
          assert.strictEqual((error as { _tag: string })._tag, "NotParticipant", transport)
        }
      }))
  })

  describe("roomEvents (async iterator)", () => {
    it.effect("iterates the frames until the room closes", () =>
      Effect.gen(function*() {
        const c = yield* conversation
        yield* c.say("second")
        yield* c.bo.client.api.rooms.close({ params: { id: c.room.id } })
        const frames = yield* Effect.promise(async () => {
          const out: Array<Rooms.PollFrame> = []
          for await (const frame of Sdk.roomEvents(c.options, c.room.chat_id)) out.push(frame)
          return out
        })
        assert.deepStrictEqual(contents(frames).slice(0, 2), ["first", "second"])
        assert.strictEqual(frames.at(-1)!.room_status, "closed")
      }))
  })

  describe("roomEvents (async iterator): how a failure rejects", () => {
    it.effect("a refusal the API declares: ApiError with its _tag, status, message and body, over either transport", () =>
      Effect.gen(function*() {
        const c = yield* conversation
        const stranger = yield* person("Stranger")
        const strangerOptions = { baseUrl: c.options.baseUrl, sessionToken: (yield* stranger.client.sessionToken)! }
        for (const transport of ["auto", "websocket", "poll"] as const) {
          const { error, frames } = yield* iterate({ ...strangerOptions, transport }, c.room.chat_id)
          assert.deepStrictEqual(frames, [], transport)
          assert.instanceOf(error, ApiError, transport)
          assert.instanceOf(error, PlatformError, transport)
          const refused = error as ApiError
          assert.deepInclude(refused, { _tag: "NotParticipant", status: 403 }, transport)
          assert.isNotEmpty(refused.message, transport)
          assert.deepInclude(refused.body, { _tag: "NotParticipant", error: refused.message }, transport)
        }

        const unauthenticated = yield* iterate(
          { baseUrl: c.options.baseUrl, sessionToken: "not-a-session" },
          c.room.chat_id
        )
        assert.instanceOf(unauthenticated.error, ApiError)
        assert.deepInclude(unauthenticated.error as object, { _tag: "Unauthenticated", status: 401 })
        assert.isNotEmpty((unauthenticated.error as ApiError).message)

        const unknown = crypto.randomUUID()
        const missing = yield* iterate(c.options, unknown)
        assert.instanceOf(missing.error, ApiError)
        assert.deepInclude(missing.error as object, { _tag: "NotFound", status: 404 })
        assert.isNotEmpty((missing.error as ApiError).message)
      }))

    it.effect("a refused connection: ConnectionError, no status, `cannot reach <url> (ECONNREFUSED)` and what to check, over either transport", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const baseUrl = `http://127.0.0.1:${port}`
        for (const transport of ["auto", "websocket", "poll"] as const) {
          const { error } = yield* iterate({ baseUrl, sessionToken: "s", transport, pollWait: 5 }, "c1")
          assert.instanceOf(error, ConnectionError, transport)
          assert.instanceOf(error, PlatformError, transport)
          assert.deepInclude(error as object, { _tag: "ConnectionError", status: undefined }, transport)
          assert.strictEqual(
            (error as ConnectionError).message,
            refusedMessage(`${baseUrl}/api/chats/c1/messages`),
            transport
          )
        }
      }))

    it.effect("transport websocket behind a proxy that refuses upgrades: ConnectionError saying the service answers over HTTP", () =>
      Effect.gen(function*() {
        const c = yield* conversation
        const proxy = yield* upgradeRefusingProxy
        const { error, frames } = yield* iterate(
          { ...c.options, baseUrl: proxy.url, transport: "websocket", pollWait: 1 },
          c.room.chat_id
        )
        assert.deepStrictEqual(frames, [])
        assert.instanceOf(error, ConnectionError)
        assert.deepInclude(error as object, { _tag: "ConnectionError", status: undefined })
        assert.match(
          (error as ConnectionError).message,
          /^cannot open the room WebSocket ws:\/\/127\.0\.0\.1:\d+\/api\/chats\/[^/]+\/ws\?after=0 \(.+\), though the service answers over HTTP: a proxy on the way may refuse WebSocket upgrades; use transport "auto" or "poll"$/
        )
      }))

    it.effect("a WebSocket that closes before the room does: the frames, then RoomEventsBrokenError, 101, where to resume", () =>
      Effect.gen(function*() {
        const frame: Rooms.PollFrame = { cursor: 3, messages: [], presence: [], room_status: "open" }
        const server = yield* scriptedSocketServer([JSON.stringify(frame)], 1011)
        const { error, frames } = yield* iterate(
          { baseUrl: server.url, sessionToken: "s", transport: "websocket" },
          "c1"
        )
        assert.deepStrictEqual(frames, [frame])
        assert.instanceOf(error, RoomEventsBrokenError)
        assert.instanceOf(error, PlatformError)
        assert.deepInclude(error as object, { _tag: "RoomEventsError", status: 101 })
        assert.strictEqual(
          (error as RoomEventsBrokenError).message,
          `the room WebSocket ${
            server.url.replace("http", "ws")
          }/api/chats/c1/ws?after=0 closed (1011: going away) before the room did: start again with after: 3, or use transport "auto", which carries on by long polling`
        )
      }).pipe(Effect.scoped))

    it.effect("a WebSocket that sends something else: RoomEventsBrokenError, 101, naming it", () =>
      Effect.gen(function*() {
        const server = yield* scriptedSocketServer([JSON.stringify({ cursor: "three" })], 1000)
        const { error } = yield* iterate({ baseUrl: server.url, sessionToken: "s", transport: "websocket" }, "c1")
        assert.instanceOf(error, RoomEventsBrokenError)
        assert.deepInclude(error as object, { _tag: "RoomEventsError", status: 101 })
        assert.include(
          (error as RoomEventsBrokenError).message,
          `not a room frame from ${server.url.replace("http", "ws")}/api/chats/c1/ws?after=0: {"cursor":"three"}; `
        )
      }).pipe(Effect.scoped))

    it.effect("roomEventsStream (Effect) fails with a RoomEventsError whose reason, status and message say what happened", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const error = yield* run(
          Sdk.roomEventsStream({ baseUrl: `http://127.0.0.1:${port}`, sessionToken: "s", pollWait: 5 }, "c1")
        ).pipe(Effect.flip)
        assert.instanceOf(error, Sdk.RoomEventsError)
        const failed = error as Sdk.RoomEventsError
        assert.strictEqual(failed.reason, "Unreachable")
        assert.isUndefined(failed.status)
        assert.strictEqual(
          failed.message,
          refusedMessage(`http://127.0.0.1:${port}/api/chats/c1/messages`)
        )
        assert.strictEqual(failed.error, failed.message)
      }))
  })
})
