/**
 * What `patches/effect@4.1.0.patch` changes in effect must not change what
 * effect's functions return: `Context.merge` of a few services adds them as
 * overlays (no copy), with the same services, the same precedence (the
 * second context wins) and the same reference semantics as a copy; an
 * HttpApi security middleware with one scheme answers as before; headers
 * made from a record (every request's) are the same headers. Two changes are
 * refusals: a JSON payload spelling a lone UTF-16 surrogate, or whose bytes
 * are not UTF-8, is a 400.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger, Redacted, Schema } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as Headers from "effect/http/Headers"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as References from "effect/References"

const A = Context.Service<string>("test/A")
const B = Context.Service<string>("test/B")
const C = Context.Service<string>("test/C")
const D = Context.Service<string>("test/D")
const E = Context.Service<string>("test/E")
const Level = Context.Reference<string>("test/Level", { defaultValue: () => "default" })

/** A, `count` numbered services, then B and C as overlays on top (as a request's context has them). */
const withOverlays = (count: number) => {
  let context = Context.make(A, "a")
  for (let i = 0; i < count; i++) context = Context.add(context, Context.Service<number>(`test/S${i}`), i)
  return context.pipe(Context.add(B, "b"), Context.add(C, "c"))
}

const entries = (context: Context.Context<never>) =>
  [...context.mapUnsafe].filter(([key]) => !key.startsWith("test/S")).sort(([a], [b]) => a.localeCompare(b))

describe("Context.merge (patched)", () => {
  it("merges a few services: all present, the second context's winning", () => {
    const merged = Context.merge(withOverlays(20), Context.make(C, "c2").pipe(Context.add(D, "d")))
    assert.deepStrictEqual(entries(merged as Context.Context<never>), [
      ["test/A", "a"],
      ["test/B", "b"],
      ["test/C", "c2"],
      ["test/D", "d"]
    ])
    assert.strictEqual(Context.get(merged, C), "c2")
    assert.strictEqual(merged.mapUnsafe.size, 24)
  })

  it("merges many services by copying, with the same result", () => {
    const many = Context.make(A, "a2").pipe(
      Context.add(B, "b2"),
      Context.add(C, "c2"),
      Context.add(D, "d2"),
      Context.add(E, "e2")
    )
    const merged = Context.merge(withOverlays(3), many)
    assert.deepStrictEqual(entries(merged as Context.Context<never>), [
      ["test/A", "a2"],
      ["test/B", "b2"],
      ["test/C", "c2"],
      ["test/D", "d2"],
      ["test/E", "e2"]
    ])
  })

  it("returns either side unchanged when the other is empty, without flattening it", () => {
    const context = withOverlays(2)
    assert.strictEqual(Context.merge(context, Context.empty()), context)
    assert.strictEqual(Context.merge(Context.empty(), context), context)
  })

  it.effect("a reference merged into a fiber's context is read, not a cached default", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Level, "default")
      const inner = yield* Effect.provideContext(Effect.service(Level), Context.make(Level, "merged"))
      assert.strictEqual(inner, "merged")
      assert.strictEqual(yield* Level, "default")
    }))

  it.effect("a fiber-cached reference merged into a fiber's context takes effect (the minimum log level)", () =>
    Effect.gen(function*() {
      const logged: Array<unknown> = []
      const capture = Logger.layer([Logger.make((options) => logged.push(options.message))])
      yield* Effect.gen(function*() {
        yield* Effect.logInfo("before")
        yield* Effect.provideContext(Effect.logInfo("hidden"), Context.make(References.MinimumLogLevel, "Error"))
        yield* Effect.logInfo("after")
      }).pipe(Effect.provide(capture))
      assert.deepStrictEqual(logged.map((message) => [message].flat()[0]), ["before", "after"])
    }))

  it.effect("a service merged into a fiber's context is seen by the effect it is provided to", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.provideContext(
        Effect.all([Effect.service(A), Effect.service(D)]),
        Context.make(D, "d")
      ).pipe(Effect.provideService(A, "a"))
      assert.deepStrictEqual(seen, ["a", "d"])
    }))
})

// ---------------------------------------------------------------------------
// HttpApiBuilder: a security middleware with one scheme runs without the
// generic path's generator and Result per request. Outcomes must not change.

class Teapot extends Schema.TaggedError<Teapot>()("Teapot", { reason: Schema.String }, { httpApiStatus: 418 }) {}
class Caller extends Context.Service<Caller, string>()("test/Caller") {}

class Guard extends HttpApiMiddleware.Service<Guard, { provides: Caller }>()("test/Guard", {
  security: { bearer: HttpApiSecurity.bearer },
  error: [Teapot]
}) {}

const GuardedApi = HttpApi.make("guarded").add(
  HttpApiGroup.make("things")
    .add(HttpApiEndpoint.get("whoami", "/whoami", { success: Schema.Struct({ caller: Schema.String }) }))
    .add(HttpApiEndpoint.get("fails", "/fails", { success: Schema.String, error: Teapot }))
    .middleware(Guard)
)

const guardedHandler = () =>
  HttpRouter.toWebHandler(
    HttpApiBuilder.layer(GuardedApi).pipe(
      Layer.provide(HttpApiBuilder.group(GuardedApi, "things", (handlers) =>
        handlers
          .handle("whoami", () => Effect.map(Effect.service(Caller), (caller) => ({ caller })))
          // The handler fails with the middleware's own error type: still the handler's failure.
          .handle("fails", () => Effect.fail(new Teapot({ reason: "from the handler" }))))),
      Layer.provide(Layer.succeed(Guard, {
        bearer: (handled, { credential }) => {
          const token = Redacted.value(credential)
          return token === ""
            ? Effect.fail(new Teapot({ reason: "no credential" }))
            : Effect.provideService(handled, Caller, token)
        }
      })),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )

describe("HttpApiBuilder security middleware with one scheme (patched)", () => {
  it("provides what the middleware provides, fails with the middleware's error, passes the handler's through", async () => {
    const { dispose, handler } = guardedHandler()
    try {
      const call = async (path: string, authorization?: string) => {
        const response = await handler(
          new Request(`http://test${path}`, { headers: authorization === undefined ? {} : { authorization } })
        )
        return [response.status, await response.json()]
      }
      assert.deepStrictEqual(await call("/whoami", "Bearer alice"), [200, { caller: "alice" }])
      assert.deepStrictEqual(await call("/whoami"), [418, { _tag: "Teapot", reason: "no credential" }])
      assert.deepStrictEqual(await call("/fails", "Bearer alice"), [418, {
        _tag: "Teapot",
        reason: "from the handler"
      }])
      assert.deepStrictEqual(await call("/fails"), [418, { _tag: "Teapot", reason: "no credential" }])
    } finally {
      await dispose()
    }
  })
})

// ---------------------------------------------------------------------------
// HttpApiBuilder: a JSON payload spelling a lone UTF-16 surrogate is a payload
// schema error (400), whatever the schema; well-formed text is decoded as before.

const EchoApi = HttpApi.make("echo").add(
  HttpApiGroup.make("things").add(
    HttpApiEndpoint.post("echo", "/echo", {
      payload: Schema.Struct({ text: Schema.String, tags: Schema.optional(Schema.Array(Schema.String)) }),
      success: Schema.Struct({ text: Schema.String })
    })
  )
)

const echoHandler = () =>
  HttpRouter.toWebHandler(
    HttpApiBuilder.layer(EchoApi).pipe(
      Layer.provide(HttpApiBuilder.group(EchoApi, "things", (handlers) =>
        handlers.handle("echo", ({ payload }) =>
          Effect.succeed({ text: payload.text })))),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )

describe("HttpApiBuilder JSON payloads with lone surrogates or bytes that are not UTF-8 (patched)", () => {
  it("refuses a lone surrogate in any string, key or element; decodes pairs and escaped backslashes", async () => {
    const { dispose, handler } = echoHandler()
    try {
      const post = async (body: string) => {
        const response = await handler(
          new Request("http://test/echo", { method: "POST", headers: { "content-type": "application/json" }, body })
        )
        return [response.status, await response.text()] as const
      }
      for (
        const body of [
          `{"text":"\\ud800"}`,
          `{"text":"a\\uDFFFb"}`,
          `{"text":"ok","tags":["x","\\udbff\\u0041"]}`,
          `{"text":"ok","\\udc00":1}`
        ]
      ) {
        const [status] = await post(body)
        assert.strictEqual(status, 400, body)
      }
      assert.deepStrictEqual(await post(`{"text":"smile \\ud83d\\ude00"}`), [200, `{"text":"smile \u{1F600}"}`])
      assert.deepStrictEqual(await post(`{"text":"back\\\\ud800slash"}`), [200, `{"text":"back\\\\ud800slash"}`])
      assert.strictEqual((await post(`{"text":1}`))[0], 400)
    } finally {
      await dispose()
    }
  })

  it("refuses bytes that are not UTF-8, which the decoder would have replaced by U+FFFD; keeps a U+FFFD sent", async () => {
    const { dispose, handler } = echoHandler()
    try {
      const post = async (text: Uint8Array) => {
        const body = Buffer.concat([Buffer.from(`{"text":"`), text, Buffer.from(`"}`)])
        const response = await handler(
          new Request("http://test/echo", { method: "POST", headers: { "content-type": "application/json" }, body })
        )
        return [response.status, await response.text()] as const
      }
      // A schema error: effect's default answer is a bare 400 (the platform's says what is wrong).
      assert.strictEqual((await post(Uint8Array.from([0x63, 0xe9])))[0], 400)
      assert.deepStrictEqual(await post(Buffer.from("c\uFFFD", "utf8")), [200, `{"text":"c\uFFFD"}`])
    } finally {
      await dispose()
    }
  })
})

describe("Headers.fromInput of a record (patched)", () => {
  it("lower-cases names, joins arrays, skips undefined, and reads own names only", () => {
    const inherited = Object.create({ "x-inherited": "no" }) as Record<string, unknown>
    Object.assign(inherited, {
      Host: "127.0.0.1",
      "Set-Cookie": ["a=1", "b=2"],
      "x-empty": "",
      "x-missing": undefined
    })
    const headers = Headers.fromInput(inherited as Headers.Input)
    assert.deepStrictEqual({ ...headers }, { host: "127.0.0.1", "set-cookie": "a=1, b=2", "x-empty": "" })
    assert.isTrue(Headers.isHeaders(headers))
  })

  it("gives the same headers as from the record's entries", () => {
    const record = { Accept: "*/*", authorization: "Bearer k", "X-Many": ["1", "2"] }
    assert.deepStrictEqual(
      { ...Headers.fromInput(record) },
      { ...Headers.fromInput(Object.entries(record).map(([k, v]) => [k, [v].flat().join(", ")] as const)) }
    )
    assert.deepStrictEqual(
      { ...Headers.setAll(Headers.fromInput({ a: "1", b: "2" }), { B: "3", c: ["4"] }) },
      { a: "1", b: "3", c: "4" }
    )
  })
})
