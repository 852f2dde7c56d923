/**
 * Real HTTP servers on 127.0.0.1 for tests that reach out: action targets and
 * webhook receivers. Each records what it received and answers with `answer`
 * (changeable while it runs; "hang" never answers); it closes with the test.
 * Also a server whose answer breaks off, and a port nothing listens on.
 */
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import { type AddressInfo, createServer as createNetServer } from "node:net"

export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export type Answer =
  | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | "hang"

export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly received: Array<Received>
  answer: (request: Received, count: number) => Answer
  /** Waits until `count` requests have arrived. */
  readonly waitFor: (count: number) => Effect.Effect<void>
}

/** A JSON answer. */
export const jsonAnswer = (status: number, body: unknown): Answer => ({
  status,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" }
})

export const localServer = (answer: (request: Received, count: number) => Answer) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly self: LocalServer; readonly close: () => Promise<void> }>((resume) => {
      const received: Array<Received> = []
      const waiters: Array<() => boolean> = []
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const request = {
            method: req.method ?? "",
            url: req.url ?? "",
            headers: req.headers,
            body: Buffer.concat(chunks).toString("utf8")
          }
          received.push(request)
          const reply = self.answer(request, received.length)
          for (const waiter of waiters.splice(0)) if (!waiter()) waiters.push(waiter)
          if (reply !== "hang") res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? "")
        })
      })
      const self: LocalServer = {
        url: "",
        received,
        answer,
        waitFor: (count) =>
          Effect.callback<void>((resume) => {
            const check = () => {
              if (received.length < count) return false
              resume(Effect.void)
              return true
            }
            if (!check()) waiters.push(check)
          })
      }
      const close = () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      server.listen(0, "127.0.0.1", () => {
        ;(self as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed({ self, close }))
      })
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ self }) => self))

/** What the SDK says of a request to `url` whose connection was refused (the contract of its `ConnectionError`). */
export const refusedMessage = (url: string) =>
  `cannot reach ${url} (ECONNREFUSED): is the service running there, and is baseUrl right?`

/** What the SDK says of a `method` request to `url` that got no answer within `timeout` (its `TimeoutError`). */
export const timedOutMessage = (method: string, url: string, timeout: string) =>
  `${method} ${url}: no answer within ${timeout}: retry, or give the client a longer timeout`

/** A loopback port nothing listens on (taken, then released): a refused connection. */
export const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const probe = createNetServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
)

/** A server that answers 200 with `contentType`, sends `start`, then drops the connection; it closes with the test. */
export const breakingServer = (contentType: string, start: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly close: () => Promise<void> }>((resolve) => {
        const server = createServer((request, response) => {
          request.resume()
          response.writeHead(200, { "content-type": contentType })
          response.write(start, () => {
            setTimeout(() => response.destroy(), 50)
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          }))
      })
    ),
    (server) => Effect.promise(server.close)
  ).pipe(Effect.map(({ url }) => ({ url })))
