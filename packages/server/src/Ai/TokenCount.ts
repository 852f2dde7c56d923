/**
 * The embedded model's tokenizer, used to count its usage honestly (and to
 * estimate a provider's usage when it reports none). A token is a word of up
 * to six characters, one more per further six characters of a longer word,
 * and each punctuation mark or symbol: close to what BPE tokenizers count for
 * English text, and the same count every time.
 */
import { Effect } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import * as Tokenizer from "effect/ai/Tokenizer"

const piecePattern = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu
const maxPieceLength = 6

/** The tokens of a text, as the text pieces they stand for, in order. */
export const tokenPieces = (text: string): Array<string> => {
  const pieces: Array<string> = []
  for (const match of text.matchAll(piecePattern)) {
    const piece = match[0]
    for (let i = 0; i < piece.length; i += maxPieceLength) pieces.push(piece.slice(i, i + maxPieceLength))
  }
  return pieces
}

/** Whether an ASCII character is a space to `\s`: space, tab, line feed, vertical tab, form feed, return. */
export const isAsciiSpace = (c: number) => c === 32 || (c >= 9 && c <= 13)
const isAsciiWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57)

/**
 * How many tokens a text is. ASCII text (prompts mostly are) is counted in
 * one pass over its characters, allocating nothing: in ASCII, `piecePattern`'s
 * letters and digits are `[A-Za-z0-9]` and its spaces `[ \t\n\v\f\r]`.
 */
export const countTokens = (text: string): number => {
  let count = 0
  let start = -1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c > 127) return countPieces(text)
    if (isAsciiWordChar(c)) {
      if (start < 0) start = i
      continue
    }
    if (start >= 0) {
      count += Math.ceil((i - start) / maxPieceLength)
      start = -1
    }
    if (!isAsciiSpace(c)) count++
  }
  return start >= 0 ? count + Math.ceil((text.length - start) / maxPieceLength) : count
}

/** `countTokens` for any text. */
const countPieces = (text: string): number => {
  let count = 0
  for (const match of text.matchAll(piecePattern)) count += Math.ceil(match[0].length / maxPieceLength)
  return count
}

/** The text of every message of a prompt, tool calls and results as their JSON. */
export const promptText = (prompt: Prompt.Prompt): string =>
  prompt.content
    .map((message) => {
      if (message.role === "system") return message.content
      return message.content
        .map((part) => {
          switch (part.type) {
            case "text":
            case "reasoning":
              return part.text
            case "tool-call":
              return `${part.name} ${JSON.stringify(part.params)}`
            case "tool-result":
              return `${part.name} ${JSON.stringify(part.result)}`
            default:
              return ""
          }
        })
        .join(" ")
    })
    .join("\n")

/** How many tokens a prompt is. */
export const countPromptTokens = (prompt: Prompt.Prompt): number => countTokens(promptText(prompt))

const pieceId = (piece: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < piece.length; i++) hash = Math.imul(hash ^ piece.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/** The same count as effect's `Tokenizer` service (token ids are hashes of the pieces). */
export const tokenizer: Tokenizer.Service = Tokenizer.make({
  tokenize: (prompt) => Effect.sync(() => tokenPieces(promptText(prompt)).map(pieceId))
})
