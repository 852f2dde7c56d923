/**
 * The held `nextTick` entry: it is one of Node's queue entries, and entries
 * made after full collections still share its hidden class (V8 kept the maps
 * it holds), which is what keeps `nextTick`'s feedback monomorphic.
 */
import { assert, describe, it } from "@effect/vitest"
import { executionAsyncResource } from "node:async_hooks"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

// Natives syntax and `gc` for code compiled from here on (the functions below).
setFlagsFromString("--allow-natives-syntax")
setFlagsFromString("--expose-gc")
const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean
const fullGc = runInNewContext("gc") as () => void

/** The queue entry of a `nextTick` callback, from inside it. */
const nextTickEntry = () => new Promise<object>((resolve) => process.nextTick(() => resolve(executionAsyncResource())))

describe("TickShape", () => {
  it("holds a nextTick entry whose map later entries share, across full collections", async () => {
    const tickShape = await import("../src/Platform/TickShape.ts")
    await nextTickEntry() // the module's own callback has run by then
    const held = tickShape.heldTickEntry
    assert.isDefined(held)
    assert.strictEqual(typeof (held as { callback?: unknown }).callback, "function")
    for (let round = 0; round < 3; round++) {
      fullGc()
      const fresh = await nextTickEntry()
      assert.notStrictEqual(fresh, held)
      assert.isTrue(haveSameMap(held!, fresh), `round ${round}: a new entry has another map than the held one`)
    }
  })
})
