/**
 * Room fan-out over WebSockets: BENCH_SOCKETS clients (200) of BENCH_PEOPLE
 * participants (20) connected to one room's `GET /api/chats/{id}/ws`; one
 * more participant appends BENCH_MESSAGES messages (50) one after another
 * through `POST /api/chats/{id}/messages/append`. Each figure is the time from
 * sending the append to the moment the last of the clients has the frame with
 * that message (p50 and p99).
 *
 * The baseline is a bare `ws` server in its own process that, on each POST,
 * sends a frame of the same size (the platform's own last frame, re-numbered)
 * to every connected client, measured the same way in the same run: the ratio
 * is what the platform costs over the transport (storing the message with its
 * gapless seq, NOTIFY through PostgreSQL, reading the new messages and the
 * presence once per room, one frame per client).
 *
 *   pnpm bench:rooms    (embedded database; BENCH_SOCKETS, BENCH_PEOPLE, BENCH_MESSAGES)
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import WebSocket from "ws"
import { makePromiseClient } from "../packages/sdk/src/index.ts"
import { benchAdmin, freePort, ms, report, startService } from "./Harness.ts"

const socketCount = Number(process.env.BENCH_SOCKETS ?? 200)
const peopleCount = Number(process.env.BENCH_PEOPLE ?? 20)
const messages = Number(process.env.BENCH_MESSAGES ?? 50)
const warmup = 5
const memberPassword = "Bench-Member-Passw0rd!"

const agent = new Agent({ keepAlive: true, maxSockets: 4 })

/** POSTs `body` as JSON with `headers`; resolves with the status. */
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  new Promise<number>((resolve, reject) => {
    const text = JSON.stringify(body)
    const req = request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers }
    }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode ?? 0))
    })
    req.on("error", reject)
    req.end(text)
  })

interface Clients {
  /** Resolves when every client has a frame carrying message `seq`, with the time the last one got it. */
  readonly allHave: (seq: number) => Promise<number>
  readonly lastFrame: () => string
  readonly close: () => void
}

/** Opens `count` WebSocket clients to `url(i)` and tracks the highest message seq each has seen. */
const connect = async (
  count: number,
  url: (i: number) => string,
  headers: (i: number) => Record<string, string>
): Promise<Clients> => {
  const seen = new Array<number>(count).fill(0)
  let waiting: { seq: number; resolve: (at: number) => void } | undefined
  let last = ""
  const check = () => {
    if (waiting !== undefined && seen.every((s) => s >= waiting!.seq)) {
      const done = waiting
      waiting = undefined
      done.resolve(performance.now())
    }
  }
  const sockets = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(url(i), { headers: headers(i) })
        socket.on("message", (data) => {
          const text = data.toString()
          last = text
          const frame = JSON.parse(text) as { readonly messages?: ReadonlyArray<{ readonly seq: number }> }
          for (const message of frame.messages ?? []) seen[i] = Math.max(seen[i], message.seq)
          check()
        })
        socket.once("open", () => resolve(socket))
        socket.once("error", reject)
      }))
  )
  return {
    allHave: (seq) =>
      new Promise((resolve) => {
        waiting = { seq, resolve }
        check()
      }),
    lastFrame: () => last,
    close: () => sockets.forEach((socket) => socket.terminate())
  }
}

/** Appends `count` messages one at a time with `send(seq)`; the append-to-last-frame latency of each. */
const measure = async (clients: Clients, firstSeq: number, count: number, send: (seq: number) => Promise<void>) => {
  const latencies: Array<number> = []
  for (let i = 0; i < count; i++) {
    const seq = firstSeq + i
    const started = performance.now()
    const delivered = clients.allHave(seq)
    await send(seq)
    latencies.push((await delivered) - started)
  }
  return latencies
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

// ---------------------------------------------------------------------------
// The platform: embedded database, one room, its people connected.

const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-bench-rooms-"))
const service = await startService({
  DATA_DIR: dataDir,
  BOOTSTRAP_ADMIN_PASSWORD: benchAdmin.password,
  SESSION_SECRET: "bench-rooms-session-secret-0123456789abcdef",
  LOG_LEVEL: "Error"
})
let baseline: ReturnType<typeof spawn> | undefined
let platformClients: Clients | undefined
let baselineClients: Clients | undefined
try {
  const admin = makePromiseClient({ baseUrl: service.url })
  await admin.auth.login({ payload: benchAdmin })
  await admin.admin.updateFlags({ payload: { feature_war_rooms: true } })
  const space = await admin.admin.createSpace({ payload: { code: "bench-rooms", name: "Bench rooms" } })
  const seeded = await admin.blueprints.seedDefaults({ payload: { space_id: space.id } })
  const { room } = await admin.rooms.create({
    payload: { external_ref: "bench-room", blueprint_id: seeded.blueprint_ids.ephemeral }
  })
  const cookies: Array<string> = []
  for (let i = 0; i < peopleCount; i++) {
    const email = `member-${i}@bench.example.com`
    const user = await admin.admin.createUser({
      payload: { email, nombre: `Member ${i}`, password: memberPassword, role_id: "r_user" }
    })
    await admin.rooms.addParticipant({ params: { id: room.id }, payload: { user_id: user.id } })
    const member = makePromiseClient({ baseUrl: service.url })
    await member.auth.login({ payload: { email, password: memberPassword } })
    cookies.push(`Service-Token=${await member.sessionToken()}`)
    await member.dispose()
  }
  const sender = `Service-Token=${await admin.sessionToken()}`
  await admin.dispose()

  const socketUrl = `${service.url.replace(/^http/, "ws")}/api/chats/${room.chat_id}/ws`
  platformClients = await connect(socketCount, () => socketUrl, (i) => ({ cookie: cookies[i % cookies.length] }))
  const appendUrl = `${service.url}/api/chats/${room.chat_id}/messages/append`
  const append = async (seq: number) => {
    const status = await post(appendUrl, { content: `Status update ${seq}: the rollback is at step ${seq}.` }, {
      cookie: sender
    })
    if (status !== 201) throw new Error(`append answered ${status}`)
  }
  await measure(platformClients, 1, warmup, append)
  const platform = await measure(platformClients, warmup + 1, messages, append)
  const frame = platformClients.lastFrame()
  platformClients.close()

  // -------------------------------------------------------------------------
  // The baseline: a bare ws server that sends a frame of the same size to every client on each POST.

  const port = await freePort()
  baseline = spawn(process.execPath, [
    "-e",
    `
    const { WebSocketServer } = require("ws")
    const template = JSON.parse(process.env.FRAME)
    const server = require("node:http").createServer((req, res) => {
      const chunks = []
      req.on("data", (c) => chunks.push(c))
      req.on("end", () => {
        const seq = JSON.parse(Buffer.concat(chunks).toString()).seq
        const frame = JSON.stringify({ ...template, cursor: seq, messages: template.messages.map((m) => ({ ...m, seq })) })
        for (const client of wss.clients) client.send(frame)
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ seq }))
      })
    })
    const wss = new WebSocketServer({ server })
    server.listen(${port}, "127.0.0.1", () => console.log("ready"))
  `
  ], { cwd: process.cwd(), env: { ...process.env, FRAME: frame }, stdio: ["ignore", "pipe", "inherit"] })
  await new Promise<void>((resolve) => baseline!.stdout!.once("data", () => resolve()))
  baselineClients = await connect(socketCount, () => `ws://127.0.0.1:${port}/`, () => ({}))
  const bare = (seq: number) => post(`http://127.0.0.1:${port}/append`, { seq }).then(() => undefined)
  await measure(baselineClients, 1, warmup, bare)
  const transport = await measure(baselineClients, warmup + 1, messages, bare)

  console.log(
    `\nRoom fan-out: ${socketCount} WebSocket clients of ${peopleCount} people in one room, ${messages} appends one after another`
  )
  console.log(`(frame of ${Buffer.byteLength(frame)} bytes; time from the append to the last client's frame)\n`)
  report("platform p50 (append -> last client's frame)", ms(percentile(platform, 50)))
  report("platform p99", ms(percentile(platform, 99)))
  report("bare ws fan-out p50 (POST -> last client's frame)", ms(percentile(transport, 50)))
  report("bare ws fan-out p99", ms(percentile(transport, 99)))
  report("platform / bare ws, p50", `${(percentile(platform, 50) / percentile(transport, 50)).toFixed(1)}x`)
  report("platform / bare ws, p99", `${(percentile(platform, 99) / percentile(transport, 99)).toFixed(1)}x`)
} finally {
  platformClients?.close()
  baselineClients?.close()
  baseline?.kill()
  agent.destroy()
  await service.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
