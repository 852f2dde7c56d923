/**
 * A small load balancer for `bench:scale`: a node:http reverse proxy that
 * sends each request to the next of UPSTREAMS (comma-separated base URLs on
 * loopback) in turn, over keep-alive connections, and streams the answer
 * back. Listens on PORT (127.0.0.1). What a load balancer in front of the API
 * replicas does, without its own costs (TLS, health checks).
 */
import { Agent, createServer, request } from "node:http"

const upstreams = (process.env.UPSTREAMS ?? "").split(",").filter((u) => u !== "").map((u) => new URL(u))
if (upstreams.length === 0) throw new Error("UPSTREAMS: give at least one base URL")
if (upstreams.some((u) => !["127.0.0.1", "[::1]", "localhost"].includes(u.hostname))) {
  throw new Error("UPSTREAMS: loopback addresses only")
}

const agent = new Agent({ keepAlive: true, maxSockets: 128 })
let next = 0

createServer((req, res) => {
  const upstream = upstreams[next++ % upstreams.length]
  const forwarded = request({
    agent,
    host: upstream.hostname,
    port: upstream.port,
    method: req.method,
    path: req.url,
    headers: req.headers
  }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(res)
  })
  forwarded.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" })
    res.end(JSON.stringify({ error: `upstream ${upstream.host}: ${error.message}` }))
  })
  req.pipe(forwarded)
}).listen(Number(process.env.PORT), "127.0.0.1")
