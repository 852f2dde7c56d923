/**
 * The SDK's room frames (`roomEventsStream`, `roomEvents`): over the
 * WebSocket, over long polling, falling back to long polling behind a proxy
 * that refuses upgrades, ending with the room's close, and failing with the
 * API's typed errors.
 */
import type { Rooms } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import * as NodeWS from "@effect/platform-node/NodeWS"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Socket from "effect/socket/Socket"
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"
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
})
