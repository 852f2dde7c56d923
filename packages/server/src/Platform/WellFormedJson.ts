/**
 * Whether JSON text holds only valid Unicode. JSON can spell a lone UTF-16
 * surrogate (`"\ud800"`), which no database or UTF-8 consumer accepts; I-JSON
 * (RFC 7493 §2.1) refuses it. The API's payloads are checked where effect's
 * HttpApi parses them (patches/effect@4.1.0.patch, the same rule); this is
 * the check for the bodies read outside it (`/mcp`).
 */

/** A `\uD800`–`\uDFFF` escape: the only way JSON text decoded from bytes can carry a lone surrogate. */
const surrogateEscape = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/

/** A lone surrogate: in a `u` pattern a well-formed pair is one code point, so only a lone half matches. */
const loneSurrogate = /\p{Surrogate}/u

/** Whether every string of a parsed JSON value, keys included, is well-formed UTF-16. */
const wellFormed = (value: unknown): boolean => {
  if (typeof value === "string") return !loneSurrogate.test(value)
  if (Array.isArray(value)) return value.every(wellFormed)
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).every(([key, item]) => !loneSurrogate.test(key) && wellFormed(item))
  }
  return true
}

/**
 * Whether `value`, parsed from `text`, holds only valid Unicode. The value is
 * walked only when the text spells a surrogate escape at all.
 */
export const isWellFormedJson = (text: string, value: unknown): boolean =>
  !surrogateEscape.test(text) || wellFormed(value)

/**
 * The refusal's wording for a body whose bytes are not UTF-8. A decoder puts
 * U+FFFD for such bytes, so a body is checked when its text holds one (a
 * client may send U+FFFD itself); the API's payloads where effect's HttpApi
 * parses them (patches/effect@4.1.0.patch), `/mcp`'s where it reads them.
 */
export const notUtf8Message = "the body must be UTF-8 text; its bytes are not valid UTF-8"

/** The refusal's wording, the same wherever a body is refused for it. */
export const loneSurrogateMessage = "text must be valid Unicode; a lone UTF-16 surrogate (e.g. \\ud800) is not."
