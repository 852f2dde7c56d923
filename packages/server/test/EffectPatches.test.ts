/**
 * What `patches/effect@4.1.0.patch` changes in effect must not change what
 * effect's functions return: `Context.merge` of a few services adds them as
 * overlays (no copy), with the same services, the same precedence (the
 * second context wins) and the same reference semantics as a copy.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Logger } from "effect"
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
