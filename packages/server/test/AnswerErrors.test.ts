/**
 * The contract's error classes (domain AnswerError.ts) carry no stack trace —
 * they are answers, made on every refused request — while everything else
 * keeps its own, and the process's stack trace limit is left as it was.
 */
import { Errors, Scim } from "@agent-platform/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"

const frames = (error: Error) => (error.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at "))

describe("answer errors", () => {
  it("are made without a stack trace, and leave the stack trace limit as it was", () => {
    const limit = Error.stackTraceLimit
    const errors: Array<Error> = [
      new Errors.Unauthenticated({ error: "no key" }),
      new Errors.RateLimited({ error: "slow down" }),
      new Errors.NotFound({ error: "agent x not found" }),
      new Scim.ScimNotFound(Scim.scimError(404, "no such user"))
    ]
    for (const error of errors) assert.deepStrictEqual(frames(error), [], error.name)
    assert.strictEqual(Error.stackTraceLimit, limit)
    // A bug's error keeps its stack.
    assert.isAbove(frames(new Error("a defect")).length, 0)
  })

  it("are still the schema's classes: fields, tag, instanceof, and decoding from a body", () => {
    const error = new Errors.RateLimited({ error: "slow down" })
    assert.instanceOf(error, Errors.RateLimited)
    assert.instanceOf(error, Error)
    assert.strictEqual(error._tag, "RateLimited")
    assert.strictEqual(error.error, "slow down")
    const decoded = Schema.decodeUnknownSync(Errors.NotFound)({ _tag: "NotFound", error: "gone" })
    assert.instanceOf(decoded, Errors.NotFound)
    assert.deepStrictEqual(frames(decoded), [])
  })

  it.effect("fail an effect as before", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Effect.fail(new Errors.Conflict({ error: "taken" })))
      assert.strictEqual(failure._tag, "Conflict")
      const yielded = yield* Effect.flip(Effect.gen(function*() {
        return yield* new Errors.NotFound({ error: "missing" })
      }))
      assert.strictEqual(yielded.error, "missing")
    }))
})
