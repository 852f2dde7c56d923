/**
 * A turn's token usage (Chat/ChatTurn.ts `makeMeter`): what the model reports
 * when it reports it; else the embedded tokenizer's count of the call's
 * prompt and of the text it produced — for a provider that reports nothing,
 * and for a call cut short (the client left mid-answer).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Prompt from "effect/ai/Prompt"
import { countPromptTokens, countTokens } from "../src/Ai/TokenCount.ts"
import { makeMeter } from "../src/Chat/ChatTurn.ts"

const prompt: Prompt.RawInput = [
  { role: "system", content: "Answer from the excerpts: refunds take 14 days." },
  { role: "user", content: "How long do refunds take?" }
]
const promptTokens = countPromptTokens(Prompt.make(prompt))

describe("UsageMeter", () => {
  it("takes the model's own counts when it reports them", () => {
    const meter = makeMeter()
    meter.start(prompt)
    meter.text("Fourteen days.")
    meter.finish({ inputTokens: { total: 120 }, outputTokens: { total: 7 } })
    assert.deepStrictEqual(meter.totals(), { input: 120, output: 7 })
  })

  it("counts the prompt and the text itself when the model reports no usage", () => {
    const meter = makeMeter()
    meter.start(prompt)
    meter.text("Fourteen ")
    meter.text("days.")
    meter.finish({ inputTokens: {}, outputTokens: {} })
    assert.isAbove(promptTokens, 10)
    assert.deepStrictEqual(meter.totals(), { input: promptTokens, output: countTokens("Fourteen days.") })
  })

  it("counts a call cut short by its prompt and the text it produced, on top of the finished ones", () => {
    const meter = makeMeter()
    meter.start(prompt)
    meter.finish({ inputTokens: { total: 50 }, outputTokens: { total: 5 } })
    meter.start(prompt)
    meter.text("Fourteen")
    assert.deepStrictEqual(meter.totals(), { input: 50 + promptTokens, output: 5 + countTokens("Fourteen") })
  })
})
