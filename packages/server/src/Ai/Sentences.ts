/**
 * A document's text as a reader sees it: Markdown blocks — headings, list
 * items, paragraphs, table rows, code — with the hard line breaks inside a
 * paragraph or list item joined again, and each block's prose cut into
 * sentences by `Intl.Segmenter`. Chunking, summaries and the extractive
 * answerer all read text through this module, so a sentence wrapped over
 * three lines is one sentence everywhere, never three fragments.
 */

/** What a block is: its sentences are prose (`heading`, `item`, `paragraph`) or kept as written (`line`). */
export type BlockKind = "heading" | "item" | "paragraph" | "line"

export interface Block {
  readonly kind: BlockKind
  /** The Markdown marker the block's first line starts with (`## `, `- `, `1. `), or "". */
  readonly marker: string
  /** The block's text without its marker, its wrapped lines joined by single spaces. */
  readonly text: string
  /** Whether a blank line (or the start of the text) precedes the block. */
  readonly opensParagraph: boolean
}

const headingLine = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/u
const itemLine = /^(\s*(?:[-*+•]|\d{1,9}[.)])\s+)(.*)$/u
const fenceLine = /^\s{0,3}(```|~~~)/u
const tableLine = /^\s*\|/u
const underline = /^\s{0,3}(=+|-+)\s*$/u
const thematicBreak = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/u

/**
 * The blocks of a text, in order. A line continues the block above it unless
 * it is blank or starts a block of its own (a heading, a list item, a table
 * row, a code fence); a setext underline (`===`, `---`) makes the paragraph
 * above it a heading; code between fences is kept line by line.
 */
export const blocks = (text: string): Array<Block> => {
  const result: Array<Block> = []
  let open: { kind: BlockKind; marker: string; lines: Array<string>; opensParagraph: boolean } | undefined
  let blankBefore = true
  let fence: string | undefined
  const close = () => {
    if (open !== undefined) {
      const joined = open.lines.join(" ").replace(/\s+/gu, " ").trim()
      if (joined.length > 0) {
        result.push({ kind: open.kind, marker: open.marker, text: joined, opensParagraph: open.opensParagraph })
      }
    }
    open = undefined
  }
  const start = (kind: BlockKind, marker: string, line: string) => {
    close()
    open = { kind, marker, lines: [line], opensParagraph: blankBefore }
    blankBefore = false
  }
  for (const line of text.split(/\r\n?|\n/u)) {
    if (fence !== undefined) {
      if (line.trimStart().startsWith(fence)) fence = undefined
      else if (line.trim().length > 0) start("line", "", line.trimEnd())
      close()
      continue
    }
    if (line.trim().length === 0) {
      close()
      blankBefore = true
      continue
    }
    const fenced = fenceLine.exec(line)
    if (fenced !== null) {
      close()
      blankBefore = true
      fence = fenced[1]
      continue
    }
    const underlined = underline.exec(line)
    if (open?.kind === "paragraph" && open.lines.length === 1 && underlined !== null) {
      // A setext heading: written back as the ATX heading of the same level.
      open.kind = "heading"
      open.marker = underlined[1].startsWith("=") ? "# " : "## "
      close()
      continue
    }
    if (thematicBreak.test(line)) {
      close()
      blankBefore = true
      continue
    }
    const heading = headingLine.exec(line)
    if (heading !== null) {
      start("heading", `${heading[1]} `, heading[2])
      close()
      continue
    }
    const item = itemLine.exec(line)
    if (item !== null) {
      start("item", item[1].trimStart(), item[2])
      continue
    }
    if (tableLine.test(line)) {
      start("line", "", line.trim())
      close()
      continue
    }
    if (open === undefined) start("paragraph", "", line)
    else open.lines.push(line)
  }
  close()
  return result
}

const segmenter = new Intl.Segmenter("en", { granularity: "sentence" })

/**
 * Where `Intl.Segmenter` (ICU without suppressions) ends a sentence that goes
 * on: after an abbreviation ("e.g. 10 days", "Mr. Smith") or a number that
 * is a list marker ("1. Pack the item").
 */
const abbreviation = /(?:(?:^|[\s(])(?:e\.g|i\.e|etc|vs|cf|approx|ca|no|mr|mrs|ms|dr|prof|st|jr|sr)|^\d{1,3})\.$/iu

/**
 * The sentences of one run of prose, trimmed. A segment that ends in an
 * abbreviation, or is followed by one starting in lower case (no sentence
 * does), is joined to the next.
 */
export const sentencesOf = (prose: string): Array<string> => {
  const result: Array<string> = []
  let pending = ""
  for (const { segment } of segmenter.segment(prose)) {
    const trimmed = segment.trim()
    if (trimmed.length === 0) continue
    if (pending.length > 0 && (abbreviation.test(pending) || /^\p{Ll}/u.test(trimmed))) {
      pending = `${pending} ${trimmed}`
      continue
    }
    if (pending.length > 0) result.push(pending)
    pending = trimmed
  }
  if (pending.length > 0) result.push(pending)
  return result
}

/** The sentences of a block: its prose segmented, or its one line as written. */
export const sentencesOfBlock = (block: Block): Array<string> =>
  block.kind === "line" ? [block.text] : sentencesOf(block.text)

/** Every sentence of a text in reading order: headings, list items, rows and code lines count as sentences of their own. */
export const sentences = (text: string): Array<string> => blocks(text).flatMap(sentencesOfBlock)
