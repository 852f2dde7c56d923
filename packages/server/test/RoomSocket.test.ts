/**
 * The room WebSocket (`GET /api/chats/{id}/ws`) with the `ws` client, as a
 * browser or a bot would use it: the session cookie, the poll envelope as
 * frames, appends over the socket, the last frame when the room closes, the
 * refusals before the upgrade, and frames caused through another replica of
 * the service on the same database.
 */
import type * as Sdk from "@agent-platform/sdk"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option, Redacted } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import * as SqlClient from "effect/sql/SqlClient"
import { spawn } from "node:child_process"
import { request as httpRequest } from "node:http"
import { createServer as createNetServer } from "node:net"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import WebSocket from "ws"
import { ServerConfig } from "../src/Platform/Config.ts"
import { DatabaseMode } from "../src/Platform/Database.ts"
import * as EmbeddedPostgres from "../src/Platform/EmbeddedPostgres.ts"
import { makeApp } from "../src/Server.ts"
import { anaAndBoInARoom, newRoom, person, roomSpace, setRoomsFlag, socketUrl } from "./RoomsFixtures.ts"
import { adminClient, http, layer as testServer, serverSuite, sessionCookie, TestServer } from "./TestServer.ts"

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url))

interface OpenSocket {
  readonly socket: WebSocket
  /** Frames received so far, parsed. */
  readonly frames: Array<any>
  /** Waits for a frame that satisfies `test` (among those received or to come). */
  readonly next: (test: (frame: any) => boolean) => Effect.Effect<any>
  readonly send: (value: unknown) => Effect.Effect<void>
  /** The close code, once closed. */
  readonly closed: Effect.Effect<number>
}

/** Opens a WebSocket to `url` with `client`'s session; closed with the test. */
const openSocket = (url: string, client: Sdk.Connected, headers: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const cookie = yield* sessionCookie(client)
      return yield* Effect.callback<OpenSocket, Error>((resume) => {
        const socket = new WebSocket(url, { headers: { cookie, ...headers } })
        const frames: Array<any> = []
        const waiters: Array<() => void> = []
        let closeCode: number | undefined
        const closeWaiters: Array<(code: number) => void> = []
        socket.on("message", (data) => {
          frames.push(JSON.parse(data.toString()))
          for (const wake of waiters.splice(0)) wake()
        })
        socket.on("close", (code) => {
          closeCode = code
          for (const wake of closeWaiters.splice(0)) wake(code)
          for (const wake of waiters.splice(0)) wake()
        })
        socket.on("unexpected-response", (_request, response) => {
          let body = ""
          response.on("data", (chunk) => (body += chunk))
          response.on("end", () => resume(Effect.fail(Object.assign(new Error(body), { status: response.statusCode }))))
        })
        socket.on("error", (error) => resume(Effect.fail(error)))
        socket.on("open", () =>
          resume(Effect.succeed({
            socket,
            frames,
            next: (test) =>
              Effect.callback<any>((done) => {
                let seen = 0
                const check = () => {
                  for (; seen < frames.length; seen++) {
                    if (test(frames[seen])) return done(Effect.succeed(frames[seen]))
                  }
                  if (closeCode !== undefined) {
                    return done(
                      Effect.die(new Error(`closed (${closeCode}) before the frame: ${JSON.stringify(frames)}`))
                    )
                  }
                  waiters.push(check)
                }
                check()
              }),
            send: (value) => Effect.sync(() => socket.send(JSON.stringify(value))),
            closed: Effect.callback<number>((done) => {
              if (closeCode !== undefined) return done(Effect.succeed(closeCode))
              closeWaiters.push((code) => done(Effect.succeed(code)))
            })
          })))
      })
    }),
    (open) => Effect.sync(() => open.socket.terminate())
  )

/** The status of a refused handshake. */
const refusedWith = (url: string, client: Sdk.Connected, headers: Record<string, string> = {}) =>
  Effect.scoped(openSocket(url, client, headers)).pipe(
    Effect.flip,
    Effect.map((error) => ({ status: (error as { status?: number }).status, body: JSON.parse(error.message || "{}") }))
  )

/**
 * A raw GET of `path` with exactly `headers` (fetch refuses `Connection` and
 * `Upgrade`): the status, headers and parsed body of the answer, or 101 once
 * the server switches protocols (the socket is then dropped).
 */
const handshake = (path: string, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* Effect.callback<{ status: number; headers: Record<string, unknown>; body: any }>((resume) => {
      const outgoing = httpRequest(`${server.baseUrl}${path}`, { headers })
      outgoing.on("upgrade", (response, socket) => {
        socket.destroy()
        resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body: undefined }))
      })
      outgoing.on("response", (response) => {
        let text = ""
        response.on("data", (chunk) => (text += chunk))
        response.on("end", () =>
          resume(Effect.succeed({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: text === "" ? text : JSON.parse(text)
          })))
      })
      outgoing.on("error", (error) => resume(Effect.die(error)))
      outgoing.end()
    })
  })

/** A valid `Sec-WebSocket-Key`: the base64 of 16 random bytes. */
const webSocketKey = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64")

const hasMessage = (content: string) => (frame: any) =>
  Array.isArray(frame.messages) && frame.messages.some((m: any) => m.content === content)

/** The test runner's environment without the service's own settings: the replica gets its own. */
const inherited = Object.fromEntries(
  Object.entries(process.env).filter(([name]) =>
    !["DATABASE_URL", "REDIS_URL", "SESSION_SECRET", "DATA_DIR", "ROLE", "PORT", "HOST", "NODE_OPTIONS"].includes(name)
  )
)

const freePort = Effect.callback<number>((resume) => {
  const server = createNetServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * Another server process on the test's PostgreSQL database (`node --import tsx
 * packages/server/src/main.ts`, ROLE=api), signing sessions with the same
 * secret; stopped with the test. Resolves once it is healthy.
 */
const replicaProcess = Effect.gen(function*() {
  const config = yield* ServerConfig
  const sql = yield* SqlClient.SqlClient
  const [{ name }] = yield* sql<{ name: string }>`SELECT current_database() AS name`
  const url = new URL(process.env.TEST_DATABASE_URL!)
  url.pathname = `/${name}`
  const port = yield* freePort
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", "tsx", "packages/server/src/main.ts"], {
        cwd: repositoryRoot,
        env: {
          ...inherited,
          DATABASE_URL: url.toString(),
          SESSION_SECRET: Redacted.value(Option.getOrThrow(config.sessionSecret)),
          ROLE: "api",
          HOST: "127.0.0.1",
          PORT: String(port),
          LOG_LEVEL: "Error"
        },
        stdio: ["ignore", "ignore", "inherit"]
      })
    ),
    (child) => Effect.sync(() => child.kill("SIGTERM"))
  )
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) return yield* Effect.die(new Error(`the replica exited with ${child.exitCode}`))
    const healthy = yield* Effect.promise(() => fetch(`${base}/health`).then((r) => r.ok, () => false))
    if (healthy) return base
    if (Date.now() > deadline) return yield* Effect.die(new Error("the replica did not become healthy"))
    yield* Effect.sleep("200 millis")
  }
}).pipe(Effect.orDie)

/**
 * Another replica of the service on the test's database, with its own pool,
 * LISTEN connection and HTTP port. On PostgreSQL, another server process; on
 * the embedded database, which no second process may open while it is in
 * use, a second app in this process with its own connection pool over the
 * same PGlite.
 */
const secondReplica = Effect.gen(function*() {
  const embedded = yield* Effect.serviceOption(EmbeddedPostgres.EmbeddedDatabase)
  if (Option.isNone(embedded)) return yield* replicaProcess
  const config = yield* ServerConfig
  const database = Layer.merge(
    PgClient.layerFrom(PgClient.make(EmbeddedPostgres.clientConfig(embedded.value.db))),
    Layer.succeed(DatabaseMode, { kind: "embedded" })
  )
  const replica = makeApp(database).pipe(
    Layer.provideMerge(Layer.succeed(ServerConfig, { ...config, port: 0, role: "api" })),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ LOG_LEVEL: "Warn" })))
  )
  const context = yield* Layer.build(replica)
  const address = Context.get(context, HttpServer.HttpServer).address
  return `http://127.0.0.1:${"port" in address ? address.port : 0}`
}).pipe(Effect.orDie)

layer(testServer(), serverSuite)("the room WebSocket", (it) => {
  describe("GET /api/chats/{id}/ws", () => {
    it.effect("sends the poll envelope on connect and whenever someone appends; appends over the socket answer with their result", () =>
      Effect.gen(function*() {
        const { ana, bo, room } = yield* anaAndBoInARoom
        yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "before" } })
        const socket = yield* openSocket(yield* socketUrl(room.chat_id), ana.client)
        const first = yield* socket.next(() => true)
        assert.deepStrictEqual(Object.keys(first).sort(), ["cursor", "messages", "presence", "room_status"])
        assert.strictEqual(first.cursor, 1)
        assert.deepStrictEqual(first.messages.map((m: any) => m.content), ["before"])
        assert.strictEqual(first.room_status, "open")
        assert.deepInclude(first.presence.map((p: any) => [p.nombre, p.state]), ["Ana", "online"])

        yield* bo.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content: "hello from Bo" } })
        const pushed = yield* socket.next(hasMessage("hello from Bo"))
        assert.strictEqual(pushed.cursor, 2)
        assert.deepInclude(pushed.messages[0], { seq: 2, role: "user", user_id: bo.id, author_name: "Bo" })

        yield* socket.send({ type: "append", content: "typed in the socket", request_id: "r1", user_id: bo.id })
        const reply = yield* socket.next((frame) => frame.type === "appended")
        assert.deepInclude(reply, { type: "appended", request_id: "r1", seq: 3 })
        assert.isString(reply.id)
        yield* socket.next(hasMessage("typed in the socket"))
        const polled = yield* bo.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { after: 2 } })
        assert.deepInclude(polled.messages[0], { content: "typed in the socket", user_id: ana.id })

        yield* socket.send({ type: "append", content: "  " })
        const invalid = yield* socket.next((frame) => frame.type === "error")
        assert.deepInclude(invalid, { type: "error", status: 400, _tag: "InvalidRequest" })
      }))

    it.effect("starts after the cursor of `after`; presence shows who is connected", () =>
      Effect.gen(function*() {
        const { ana, bo, room } = yield* anaAndBoInARoom
        for (const content of ["one", "two", "three"]) {
          yield* ana.client.api.roomChats.append({ params: { id: room.chat_id }, payload: { content } })
        }
        const anas = yield* openSocket(yield* socketUrl(room.chat_id, "?after=2"), ana.client)
        const first = yield* anas.next(() => true)
        assert.deepStrictEqual(first.messages.map((m: any) => m.content), ["three"])
        yield* openSocket(yield* socketUrl(room.chat_id, "?after=3"), bo.client)
        const withBo = yield* anas.next((frame) =>
          frame.presence?.some((p: any) => p.nombre === "Bo" && p.state === "online")
        )
        assert.deepStrictEqual(withBo.messages, [])
      }))

    it.effect("closing the room sends a last frame with room_status closed (and the minutes), then closes with 1000", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const ana = yield* person("Ana")
        const room = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
        yield* ana.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "We decided to roll back." }
        })
        const socket = yield* openSocket(yield* socketUrl(room.chat_id), ana.client)
        yield* socket.next(hasMessage("We decided to roll back."))
        yield* ana.client.api.rooms.close({ params: { id: room.id } })
        const last = yield* socket.next((frame) => frame.room_status === "closed")
        assert.isTrue(last.messages.some((m: any) => m.role === "agent" && m.author_name === "Decisions"))
        assert.strictEqual(yield* socket.closed, 1000)
      }))

    it.effect("while a close's minutes are being written the frames show the room open; the closed frame brings them", () =>
      Effect.gen(function*() {
        const { ana, bo, room } = yield* anaAndBoInARoom
        yield* ana.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "We decided to roll back." }
        })
        const socket = yield* openSocket(yield* socketUrl(room.chat_id), ana.client)
        yield* socket.next(hasMessage("We decided to roll back."))
        const sql = yield* SqlClient.SqlClient
        // What a close leaves between its commit and its minutes (here held there: nothing due for 180 s).
        yield* sql`
          UPDATE rooms SET status = 'closed', closed_at = now(), closed_by = ${ana.id},
            minutes_due_at = now() + interval '180 seconds'
          WHERE id = ${room.id}`
        // Bo connecting makes the feed read the room meanwhile: Ana's frame says open and her socket stays.
        yield* openSocket(yield* socketUrl(room.chat_id), bo.client)
        const meanwhile = yield* socket.next((frame) =>
          frame.presence?.some((p: any) => p.nombre === "Bo" && p.state === "online")
        )
        assert.strictEqual(meanwhile.room_status, "open")
        const polled = yield* bo.client.api.roomChats.poll({ params: { id: room.chat_id }, query: { after: 1 } })
        assert.deepInclude(polled, { room_status: "open", messages: [] })
        const refused = yield* bo.client.api.roomChats.append({
          params: { id: room.chat_id },
          payload: { content: "too late" }
        }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "RoomClosed")

        // The minutes fall due and the jobs role writes them: the next frame is the last, and carries them.
        yield* sql`UPDATE rooms SET minutes_due_at = now() WHERE id = ${room.id}`
        const last = yield* socket.next((frame) => frame.room_status === "closed")
        assert.deepStrictEqual(last.messages.map((m: any) => [m.seq, m.author_name]), [[2, "Summary"], [
          3,
          "Decisions"
        ]])
        assert.strictEqual(yield* socket.closed, 1000)
      }).pipe(Effect.orDie))

    it.effect("connecting to a closed room with more than a batch to catch up on sends every batch, then closes", () =>
      Effect.gen(function*() {
        const { ana, room } = yield* anaAndBoInARoom
        const sql = yield* SqlClient.SqlClient
        // 700 messages, more than one catch-up batch (500).
        yield* sql`
          INSERT INTO chat_messages (chat_id, tenant_id, role, content, user_id, seq)
          SELECT c.id, c.tenant_id, 'user', 'message ' || g, ${ana.id}, g
          FROM chats c, generate_series(1, 700) AS g WHERE c.id = ${room.chat_id}`
        yield* sql`UPDATE chats SET last_seq = 700 WHERE id = ${room.chat_id}`
        yield* ana.client.api.rooms.close({ params: { id: room.id } })
        const socket = yield* openSocket(yield* socketUrl(room.chat_id), ana.client)
        assert.strictEqual(yield* socket.closed, 1000)
        const seqs = socket.frames.flatMap((frame) => frame.messages.map((m: any) => m.seq))
        assert.deepStrictEqual(seqs, Array.from({ length: 702 }, (_, i) => i + 1))
        assert.deepStrictEqual(socket.frames.map((frame) => frame.room_status), ["closed", "closed"])
      }).pipe(Effect.orDie))

    it.effect("an append after a logout, a block or the flag turned off closes the socket with 4403 and is not stored", () =>
      Effect.gen(function*() {
        const admin = yield* adminClient
        const endings: ReadonlyArray<
          readonly [string, (ana: { id: string; client: Sdk.Connected }) => Effect.Effect<void, never, TestServer>]
        > = [
          ["logout", (ana) => Effect.asVoid(Effect.orDie(ana.client.api.auth.logout()))],
          [
            "block",
            (ana) =>
              Effect.asVoid(
                Effect.orDie(admin.api.admin.updateUser({ params: { id: ana.id }, payload: { blocked: true } }))
              )
          ],
          ["flag off", () => setRoomsFlag(false)]
        ]
        for (const [name, end] of endings) {
          const { ana, bo, room } = yield* anaAndBoInARoom
          const socket = yield* openSocket(yield* socketUrl(room.chat_id), ana.client)
          yield* socket.next(() => true)
          yield* end(ana)
          yield* socket.send({ type: "append", content: `after the ${name}` })
          // Well before the 15 s heartbeat would notice.
          const code = yield* socket.closed.pipe(Effect.timeout("5 seconds"))
          assert.strictEqual(code, 4403, name)
          yield* setRoomsFlag(true)
          const polled = yield* bo.client.api.roomChats.poll({ params: { id: room.chat_id }, query: {} })
          assert.deepStrictEqual(polled.messages.filter((m) => m.content === `after the ${name}`), [], name)
        }
      }).pipe(Effect.ensuring(setRoomsFlag(true))))

    it.effect("a client frame over 128 KiB closes the socket with 1009; an append of 16,000 characters fits", () =>
      Effect.gen(function*() {
        const { ana, room } = yield* anaAndBoInARoom
        const socket = yield* openSocket(yield* socketUrl(room.chat_id), ana.client)
        yield* socket.next(() => true)
        // The largest append, every character escaped in the JSON (\\u00e9, six bytes for é): about 96 KB.
        yield* Effect.sync(() => socket.socket.send(`{"type":"append","content":"${"\\u00e9".repeat(16_000)}"}`))
        const reply = yield* socket.next((frame) => frame.type === "appended" || frame.type === "error")
        assert.strictEqual(reply.type, "appended")
        yield* socket.send({ type: "append", content: "x".repeat(200_000) })
        assert.strictEqual(yield* socket.closed.pipe(Effect.timeout("5 seconds")), 1009)
      }))

    it.effect("refuses before the upgrade: 401 without a session, 403 for a non-participant or a foreign Origin, 404, 426 without an upgrade", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { seeded } = yield* roomSpace()
        const ana = yield* person("Ana")
        const stranger = yield* person("Stranger")
        const room = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
        const url = yield* socketUrl(room.chat_id)
        const notParticipant = yield* refusedWith(url, stranger.client)
        assert.strictEqual(notParticipant.status, 403)
        assert.strictEqual(notParticipant.body._tag, "NotParticipant")
        const origin = yield* refusedWith(url, ana.client, { origin: "https://evil.example" })
        assert.strictEqual(origin.status, 403)
        assert.include(origin.body.error, "CORS_ORIGINS")
        const unknown = yield* refusedWith(yield* socketUrl(crypto.randomUUID()), ana.client)
        assert.strictEqual(unknown.status, 404)
        const anonymous = yield* Effect.flip(
          Effect.scoped(Effect.callback<void, Error & { status?: number | undefined }>((resume) => {
            const socket = new WebSocket(url)
            socket.on(
              "unexpected-response",
              (_q, response) => resume(Effect.fail(Object.assign(new Error(), { status: response.statusCode })))
            )
            socket.on("open", () => resume(Effect.succeed(undefined)))
          }))
        )
        assert.strictEqual(anonymous.status, 401)
        const cookie = yield* sessionCookie(ana.client)
        const plain = yield* http(`/api/chats/${room.chat_id}/ws`, { headers: { cookie } })
        assert.strictEqual(plain.status, 426)
        assert.strictEqual(plain.headers.get("upgrade"), "websocket")
      }))

    it.effect("a refused handshake is a JSON error with a request id: 426 UpgradeRequired without an upgrade, 400 naming a bad Sec-WebSocket-* header", () =>
      Effect.gen(function*() {
        const { ana, room } = yield* anaAndBoInARoom
        const cookie = yield* sessionCookie(ana.client)
        const path = `/api/chats/${room.chat_id}/ws`
        const isJsonError = (
          answer: { status: number; headers: Record<string, unknown>; body: any },
          status: number,
          tag: string
        ) => {
          assert.strictEqual(answer.status, status, JSON.stringify(answer.body))
          assert.match(String(answer.headers["content-type"]), /^application\/json/)
          assert.isString(answer.headers["x-request-id"])
          assert.strictEqual(answer.body._tag, tag)
          assert.isString(answer.body.error)
        }
        for (const headers of [{}, { upgrade: "websocket" }, { connection: "Upgrade", upgrade: "h2c" }]) {
          const plain = yield* handshake(path, { cookie, ...headers })
          isJsonError(plain, 426, "UpgradeRequired")
          assert.include(plain.body.error, "WebSocket only")
          assert.strictEqual(plain.headers.upgrade, "websocket")
        }
        const upgrade = { cookie, connection: "Upgrade", upgrade: "websocket" }
        const refusals = [
          [{ "sec-websocket-version": "13" }, "Sec-WebSocket-Key"],
          [{ "sec-websocket-key": "not a key", "sec-websocket-version": "13" }, "Sec-WebSocket-Key"],
          [
            { "sec-websocket-key": Buffer.alloc(20).toString("base64"), "sec-websocket-version": "13" },
            "Sec-WebSocket-Key"
          ],
          [{ "sec-websocket-key": webSocketKey() }, "Sec-WebSocket-Version"],
          [{ "sec-websocket-key": webSocketKey(), "sec-websocket-version": "8" }, "Sec-WebSocket-Version"],
          [
            { "sec-websocket-key": webSocketKey(), "sec-websocket-version": "13", "sec-websocket-protocol": "a b" },
            "Sec-WebSocket-Protocol"
          ],
          [
            { "sec-websocket-key": webSocketKey(), "sec-websocket-version": "13", "sec-websocket-protocol": "a, a" },
            "Sec-WebSocket-Protocol"
          ]
        ] as const
        for (const [headers, named] of refusals) {
          const refused = yield* handshake(path, { ...upgrade, ...headers })
          isJsonError(refused, 400, "InvalidRequest")
          assert.include(refused.body.error, named, JSON.stringify(headers))
          if (named === "Sec-WebSocket-Version") assert.strictEqual(refused.headers["sec-websocket-version"], "13")
        }
        const accepted = yield* handshake(path, {
          ...upgrade,
          "sec-websocket-key": webSocketKey(),
          "sec-websocket-version": "13"
        })
        assert.strictEqual(accepted.status, 101)
      }))

    it.effect(
      "a client connected to another server process gets the frames of messages appended through this one, and back",
      () =>
        Effect.gen(function*() {
          const { ana, bo, room } = yield* anaAndBoInARoom
          const replica = yield* secondReplica
          const socket = yield* openSocket(`${replica.replace(/^http/, "ws")}/api/chats/${room.chat_id}/ws`, ana.client)
          yield* socket.next(() => true)
          // Bo appends through the first replica; Ana is connected to the second.
          yield* bo.client.api.roomChats.append({
            params: { id: room.chat_id },
            payload: { content: "across replicas" }
          })
          const frame = yield* socket.next(hasMessage("across replicas"))
          assert.deepInclude(frame.messages[0], { author_name: "Bo", seq: 1 })
          // And the other way round: an append over the socket of the second replica reaches a long poll on the first.
          yield* socket.send({ type: "append", content: "back again" })
          const polled = yield* bo.client.api.roomChats.poll({
            params: { id: room.chat_id },
            query: { after: 1, wait: 30 }
          })
          assert.deepStrictEqual(polled.messages.map((m) => m.content), ["back again"])
        }),
      180_000
    )
  })
})
