/**
 * The full-text lexemes of a chunk, as lexical search (PostgreSQL without
 * pgvector, Knowledge/Retrieval.ts) matches them: the words a query is cut
 * into are cut from the chunk the same way — lower-cased runs of letters and
 * digits, accents kept — so a query word always meets the chunk's word it
 * came from. The worker sends them with the chunk as a `tsvector` literal,
 * which PostgreSQL reads in a fifth of the time its own parser takes to cut
 * the text (migration 0025).
 */

const wordPattern = /[\p{L}\p{N}]+/gu

/** The words of a text for full-text search, in order: lower-cased runs of letters and digits. */
export const indexWords = (text: string): Array<string> => text.toLowerCase().match(wordPattern) ?? []

/** PostgreSQL's bounds: a longer lexeme is refused (`to_tsvector` skips it), later positions share the last. */
const maxLexemeBytes = 2047
const maxPosition = 16383
const maxPositionsPerLexeme = 256

/** A text's lexemes: each distinct word (in order of first occurrence) with the positions where it occurs. */
export type Lexemes = ReadonlyMap<string, ReadonlyArray<number>>

/**
 * The lexemes of a text: each distinct word once, with the positions (1-based,
 * in words) where it occurs, within PostgreSQL's bounds (a word over 2,047
 * bytes is left out, as `to_tsvector` leaves it out).
 */
export const lexemesOf = (text: string): Lexemes => {
  const positions = new Map<string, Array<number>>()
  let position = 0
  for (const word of indexWords(text)) {
    position++
    // A UTF-8 character is at most 3 bytes per UTF-16 unit: only a long word needs measuring.
    if (word.length * 3 > maxLexemeBytes && Buffer.byteLength(word, "utf8") > maxLexemeBytes) continue
    const at = Math.min(position, maxPosition)
    const list = positions.get(word)
    if (list === undefined) positions.set(word, [at])
    else if (list.length < maxPositionsPerLexeme && list[list.length - 1] !== at) list.push(at)
  }
  return positions
}

/**
 * The `tsvector` literal of lexemes — `'refund':1,7 'policy':2`; an empty
 * string (the empty `tsvector`) for none. The words hold neither quotes nor
 * backslashes, so nothing needs escaping.
 */
export const tsvectorLiteralOf = (lexemes: Lexemes): string => {
  let literal = ""
  for (const [word, list] of lexemes) literal += `${literal.length === 0 ? "" : " "}'${word}':${list.join(",")}`
  return literal
}

/** The `tsvector` literal of a text (its {@link lexemesOf}). */
export const tsvectorLiteral = (text: string): string => tsvectorLiteralOf(lexemesOf(text))
