import { Effect, type Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Knowledge } from "../packages/domain/src/index.ts"
import { binaryContentProblem, storableText } from "../packages/server/src/Knowledge/Chunking.ts"
import { layerEmbedded } from "../packages/server/src/Platform/Database.ts"

let text = ""
for (let i = 0; text.length < 2 * 1024 * 1024; i++) text += `word${i} order refund invoice shipping delivery ${i}. \n\n`
text = text.slice(0, 2 * 1024 * 1024)
const t = (name: string, f: () => unknown) => {
  for (let r = 0; r < 3; r++) {
    const s = performance.now()
    f()
    console.log(name, (performance.now() - s).toFixed(1), "ms")
  }
}
const body = JSON.stringify({ agent_id: "5f0c7a52-3c1e-4c55-9a4b-0d7f1e2a9b10", filename: "big.md", content: text })
const buf = Buffer.from(body)
t("buf.toString", () => buf.toString("utf8"))
t("surrogateEscape", () => /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(body))
t("JSON.parse", () => JSON.parse(body))
const decode = Schema.decodeUnknownSync(Knowledge.IngestRequest)
t("schema decode", () => decode(JSON.parse(body)))
t("byteLength", () => Buffer.byteLength(text, "utf8"))
t("storableText", () => storableText(text))
t("binaryContentProblem", () => binaryContentProblem(text))
t("isWellFormed", () => (text as any).isWellFormed())
t("loneSurrogate", () => /\p{Surrogate}/u.test(text))
await Effect.runPromise(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE f (id serial primary key, content text not null)`
    yield* sql`ALTER TABLE f ALTER COLUMN content SET STORAGE EXTERNAL`
    yield* sql`CREATE TABLE g (id serial primary key, content text not null)`
    for (let r = 0; r < 3; r++) {
      let s = performance.now()
      yield* sql`INSERT INTO f (content) VALUES (${text})`
      console.log("insert external 2MiB", (performance.now() - s).toFixed(1))
      s = performance.now()
      yield* sql`INSERT INTO g (content) VALUES (${text})`
      console.log("insert extended 2MiB", (performance.now() - s).toFixed(1))
      s = performance.now()
      for (let k = 0; k < 16; k++) {
        yield* sql`INSERT INTO f (content) VALUES (${text.slice(k * 131072, (k + 1) * 131072)})`
      }
      console.log("16 x 128KiB external total", (performance.now() - s).toFixed(1))
      s = performance.now()
      yield* sql`INSERT INTO f (content) VALUES (${text.slice(0, 131072)})`
      console.log("1 x 128KiB external", (performance.now() - s).toFixed(1))
    }
  }).pipe(
    Effect.provide(
      layerEmbedded({ dataDir: mkdtempSync(join(tmpdir(), "upl-")) }) as Layer.Layer<SqlClient.SqlClient, unknown>
    ),
    Effect.scoped
  )
)
