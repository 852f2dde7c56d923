/**
 * The transport's ceiling: a bare node:http server answering every request
 * with the same JSON (AGENTS_JSON as `{agents}`), nothing else. Listens on PORT.
 */
import { createServer } from "node:http"

const body = JSON.stringify({ agents: JSON.parse(process.env.AGENTS_JSON ?? "[]") })

createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
}).listen(Number(process.env.PORT), "127.0.0.1")
