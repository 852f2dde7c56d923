/**
 * Text the database can store. PostgreSQL `text` cannot hold the NUL
 * character (U+0000), which JSON allows: a field that is stored or compared
 * in SQL refuses it up front (400 naming the field) instead of failing in
 * the database.
 */
import { Schema } from "effect"

/** The check: no NUL character. */
export const isStorable = Schema.isPattern(/^[^\u0000]*$/, { message: "must not contain NUL (\\u0000) characters" })

/** A string without NUL characters. */
export const StorableString = Schema.String.check(isStorable)

/** How many Unicode code points a string holds (a surrogate pair counts once): a string iterates by them. */
const codePoints = (text: string): number => {
  let count = 0
  for (const _ of text) count++
  return count
}

/**
 * Between `min` and `max` characters, counted as JSON Schema counts them
 * (Unicode code points), so the contract's `minLength` and `maxLength` are the
 * rule itself. effect's `isMinLength` counts UTF-16 code units and therefore
 * publishes half its bound as `minLength` (16 became 8 in `/openapi.json`);
 * for a bound that matters to a client (a secret's 16) the published figure
 * must be the one the server applies.
 */
export const isCharacterCountBetween = (min: number, max: number) =>
  Schema.makeFilter((text: string) => {
    const count = codePoints(text)
    return count >= min && count <= max
  }, {
    expected: `a value of ${min} to ${max} characters`,
    toJsonSchema: () => ({ minLength: min, maxLength: max })
  })

/**
 * Visible text: at least one character that is not white space. Required
 * free text (a room's ref, a name, a message, a corrected answer) must say
 * something.
 */
export const isNotBlank = Schema.makeFilter((text: string) =>
  text.trim().length > 0 ? undefined : "must not be empty or only white space"
)
