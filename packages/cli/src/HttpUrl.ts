/**
 * The URL flags (`--endpoint`): an absolute http or https URL, checked while
 * the command line is parsed so that a typo is refused naming the flag — the
 * server would name its field (`url`) instead.
 */
import { Schema } from "effect"

/** What a URL flag takes, as a usage error says it. */
export const rule = "an absolute http or https URL"

/** An action's `{name}` placeholders: filled from its parameters when it runs. */
const placeholders = /\{[^{}]*\}/g

/** An absolute http(s) URL with a host, `{name}` placeholders counting as text. */
export const HttpUrl = Schema.String.check(Schema.makeFilter((text: string) => {
  const filled = text.replace(placeholders, "p")
  const url = URL.canParse(filled) ? new URL(filled) : undefined
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
}))

/** Whether `text` is an absolute http(s) URL. */
export const isHttpUrl = Schema.is(HttpUrl)
