/**
 * What ingestion does to a document's text before embedding it: normalize it
 * (or reject it as binary or empty), cut it into chunks of about 800
 * characters along sentence and paragraph boundaries, each starting with the
 * last ~150 characters of the previous one so a fact that straddles a cut is
 * still found whole, and write its `content_summary`. Sentences are read as
 * `Ai/Sentences` reads them: a sentence hard-wrapped over several lines is
 * one unit (its line breaks become spaces), never cut at a line end.
 */
import { type Block, blocks, sentencesOfBlock } from "../Ai/Sentences.ts"

export const chunkTarget = 800
export const chunkOverlap = 150
export const summaryLength = 240

/** Why a document cannot be processed (stored as the file's `error`). */
export class UnprocessableDocument extends Error {
  readonly _tag = "UnprocessableDocument"
}

// Control characters other than tab, line feed and carriage return; U+FFFD marks bytes that were not text.
const controlCharacters = /[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/gu

/**
 * Why an uploaded text cannot be processed, if it is binary: it contains NUL
 * bytes (which PostgreSQL text cannot even store) or more than 2% control
 * characters (at least four). Checked at upload; the worker then fails the file with it.
 */
export const binaryContentProblem = (content: string): string | undefined => {
  if (content.includes("\u0000")) {
    return "the document contains NUL bytes: binary files cannot be ingested, send their text"
  }
  const controls = content.match(controlCharacters)?.length ?? 0
  if (controls >= 4 && controls / content.length > 0.02) {
    return "the document looks binary (too many control characters): send its text"
  }
  return undefined
}

/** The text that can be stored of an upload: NUL bytes removed. */
export const storableText = (content: string): string => content.replaceAll("\u0000", "")

/**
 * The document's text with line breaks unified, control characters and
 * repeated spaces removed and at most one blank line between paragraphs.
 * Throws `UnprocessableDocument` for binary content (a NUL byte, or more than
 * 2% control characters) and for a text that is empty once normalized.
 */
export const normalizeDocument = (content: string): string => {
  const problem = binaryContentProblem(content)
  if (problem !== undefined) throw new UnprocessableDocument(problem)
  const text = content
    .replace(/^\ufeff/u, "")
    .replace(/\r\n?/gu, "\n")
    .replace(controlCharacters, "")
    .replace(/[\t\f\v\u00a0]+/gu, " ")
    .split("\n")
    .map((line) => line.replace(/ {2,}/gu, " ").trimEnd())
    .join("\n")
    .replace(/\n{3,}/gu, "\n\n")
    .trim()
  if (text.length === 0) {
    throw new UnprocessableDocument("the document is empty once normalized (only whitespace or control characters)")
  }
  return text
}

interface Unit {
  readonly text: string
  /** What separates the unit from the previous one: a blank line, a line break (headings, lists) or a space. */
  readonly separator: "\n\n" | "\n" | " "
}

/** What precedes a block's first sentence in a chunk: a blank line, or a line break. */
const blockSeparator = (block: Block): Unit["separator"] => (block.opensParagraph ? "\n\n" : "\n")

/** Sentences (at most `chunkTarget` long: longer ones are cut between words), with what precedes them. */
const unitsOf = (text: string): Array<Unit> => {
  const units: Array<Unit> = []
  for (const block of blocks(text)) {
    let separator = blockSeparator(block)
    let marker = block.marker
    for (const sentence of sentencesOfBlock(block)) {
      for (const piece of splitLong(`${marker}${sentence}`)) {
        units.push({ text: piece, separator })
        separator = " "
        marker = ""
      }
    }
  }
  return units
}

const splitLong = (sentence: string): Array<string> => {
  if (sentence.length <= chunkTarget) return [sentence]
  const pieces: Array<string> = []
  let current = ""
  for (const word of sentence.split(/\s+/u)) {
    for (let i = 0; i < word.length; i += chunkTarget) {
      const part = word.slice(i, i + chunkTarget)
      if (current.length > 0 && current.length + 1 + part.length > chunkTarget) {
        pieces.push(current)
        current = part
      } else {
        current = current.length === 0 ? part : `${current} ${part}`
      }
    }
  }
  if (current.length > 0) pieces.push(current)
  return pieces
}

const join = (units: ReadonlyArray<Unit>) =>
  units.map((unit, i) => (i === 0 ? unit.text : `${unit.separator}${unit.text}`)).join("")

/** The last units of a chunk that fit in the overlap; the tail words of the last unit if none fits whole. */
const overlapOf = (units: ReadonlyArray<Unit>): Array<Unit> => {
  const tail: Array<Unit> = []
  let size = 0
  for (let i = units.length - 1; i >= 0; i--) {
    if (size + units[i].text.length > chunkOverlap) break
    tail.unshift(units[i])
    size += units[i].text.length + 1
  }
  if (tail.length > 0) return tail
  const words = units[units.length - 1].text.split(" ")
  const kept: Array<string> = []
  let length = 0
  for (let i = words.length - 1; i >= 0 && length + words[i].length < chunkOverlap; i--) {
    kept.unshift(words[i])
    length += words[i].length + 1
  }
  return kept.length === 0 ? [] : [{ text: kept.join(" "), separator: " " }]
}

/** The chunks of a normalized text, in order; consecutive chunks overlap. */
export const chunkText = (text: string): Array<string> => {
  const chunks: Array<string> = []
  let current: Array<Unit> = []
  let size = 0
  let fresh = 0 // units of `current` not carried over from the previous chunk
  for (const unit of unitsOf(text)) {
    if (fresh > 0 && size + unit.text.length + 2 > chunkTarget) {
      chunks.push(join(current))
      current = overlapOf(current)
      size = current.reduce((sum, u) => sum + u.text.length + 2, 0)
      fresh = 0
    }
    current.push(unit)
    size += unit.text.length + 2
    fresh++
  }
  if (fresh > 0 || chunks.length === 0) chunks.push(join(current))
  return chunks
}

/** A heading or list item read as a sentence of the summary: `Refund policy` → `Refund policy.` */
const asSentence = (text: string): string => (/[.!?:]$/u.test(text) ? text : `${text}.`)

/**
 * The file's summary: its opening sentences (headings and list items count as
 * sentences), whole, up to about 240 characters; a first sentence longer than
 * that is cut between words and ends with `…`.
 */
export const summarize = (text: string): string => {
  // Only the opening paragraphs can be in the summary: read whole paragraphs up to a first blank line past ~1 KB.
  const end = text.indexOf("\n\n", 4 * summaryLength)
  const opening = blocks(end < 0 ? text : text.slice(0, end)).flatMap((block) =>
    block.kind === "paragraph" ? sentencesOfBlock(block) : [asSentence(block.text)]
  )
  let summary = ""
  for (const sentence of opening) {
    if (summary.length + sentence.length + 1 > summaryLength) break
    summary = summary.length === 0 ? sentence : `${summary} ${sentence}`
  }
  if (summary.length > 0 || opening.length === 0) return summary
  const cut = opening[0].slice(0, summaryLength - 1)
  return `${cut.slice(0, Math.max(cut.lastIndexOf(" "), summaryLength / 2))}…`
}
