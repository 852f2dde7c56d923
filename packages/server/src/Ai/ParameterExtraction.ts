/**
 * Reads an action's parameters out of a chat message, deterministically: the
 * embedded model fills a tool call with it, and the slot-filling conversation
 * reads the user's answer to "What is the <parameter>?" with it.
 *
 * What it understands: `name: value`, `name = value`, `name is value`,
 * `set name to value`, `name "quoted value"`, `titled X` / `named X` (the
 * name plus -d/-ed), values ending at `,` `;` a line break, the next
 * parameter or the end; an email for a parameter named like one; `order 1234`
 * for a numeric parameter named `order_id`; and, for the parameter the
 * conversation just asked for, the whole answer ("it's high" → `high`).
 * Values are coerced to the parameter's type; one that does not fit is
 * reported invalid rather than guessed.
 */
import { identifierWords, stopwords } from "./Words.ts"

/** An action parameter as the catalog declares it. */
export interface ParameterSpec {
  readonly name: string
  readonly type: string
  readonly description: string
  readonly required: boolean
}

export interface Extraction {
  /** Values found, coerced to their parameter's type. */
  readonly values: Record<string, unknown>
  /** Parameters whose value was found but does not fit their type. */
  readonly invalid: ReadonlyArray<string>
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `order_id` → `order[ _-]?id`: the ways a user writes a parameter's name. */
const labelPattern = (name: string) => {
  const parts = identifierWords(name).map(escape)
  return parts.length === 0 ? escape(name.toLowerCase()) : parts.join("[ _-]?")
}

const separator = String.raw`\s*(?::|=|\bis\b|\bare\b|\bshould be\b|\bto\b|\bas\b)\s*`

interface Mention {
  readonly name: string
  readonly start: number
  readonly valueStart: number
  readonly quoted: string | undefined
}

const quotedValue = /^\s*["“'‘]([^"”'’]*)["”'’]/

/** Where each parameter is named in the message with a value after it (the first such place). */
const findMentions = (message: string, specs: ReadonlyArray<ParameterSpec>): Array<Mention> => {
  const mentions: Array<Mention> = []
  for (const spec of specs) {
    const label = new RegExp(String.raw`(?<![\p{L}\p{N}_])(?:${labelPattern(spec.name)})(e?d)?(?![\p{L}\p{N}_])`, "giu")
    for (const match of message.matchAll(label)) {
      const afterLabel = match.index + match[0].length
      const rest = message.slice(afterLabel)
      const sep = new RegExp(`^${separator}`, "iu").exec(rest)
      const valueStart = afterLabel + (sep?.[0].length ?? 0)
      const quoted = quotedValue.exec(message.slice(valueStart))
      // Without a separator only a quoted value or a "-d" form ("titled X") counts.
      if (sep === null && quoted === null && match[1] === undefined) continue
      if (sep === null && quoted === null && match[1] !== undefined && /^\s*$/.test(rest)) continue
      mentions.push({ name: spec.name, start: match.index, valueStart, quoted: quoted?.[1] })
      break
    }
  }
  return mentions.sort((a, b) => a.start - b.start)
}

const trimValue = (raw: string) =>
  raw
    .replace(/\s+(?:and|with|&)\s*$/iu, "")
    .trim()
    .replace(/^["“'‘]|["”'’]$/gu, "")
    .replace(/[.!?]+$/u, "")
    .trim()

/** A raw value coerced to a parameter type; `undefined` when it does not fit. */
export const coerce = (type: string, raw: string): unknown => {
  const text = raw.trim()
  if (text.length === 0) return undefined
  switch (type) {
    case "integer": {
      const match = /-?\d+/.exec(text.replace(/(?<=\d)[,_](?=\d{3}\b)/g, ""))
      return match === null ? undefined : Number(match[0])
    }
    case "number": {
      const match = /-?\d+(?:[.,]\d+)?/.exec(text)
      return match === null ? undefined : Number(match[0].replace(",", "."))
    }
    case "boolean": {
      if (/^(?:yes|y|true|on|1|si|sí)\b/iu.test(text)) return true
      if (/^(?:no|n|false|off|0)\b/iu.test(text)) return false
      return undefined
    }
    case "object":
    case "array": {
      try {
        const value: unknown = JSON.parse(text)
        return type === "array"
          ? (Array.isArray(value) ? value : undefined)
          : (typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined)
      } catch {
        return undefined
      }
    }
    default:
      return text.slice(0, 1000)
  }
}

const emailPattern = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/u

/** A numeric parameter named after something the message numbers: `order 1234` for `order_id`. */
const numberNear = (message: string, spec: ParameterSpec): string | undefined => {
  const nouns = identifierWords(spec.name).filter((word) =>
    !["id", "number", "num", "no", "count"].includes(word) && !stopwords.has(word)
  )
  for (const noun of nouns) {
    const match = new RegExp(
      String.raw`\b${escape(noun)}s?\s*(?:#|no\.?|number|id)?\s*[:#]?\s*(-?\d+(?:[.,]\d+)?)`,
      "iu"
    ).exec(message)
    if (match !== null) return match[1]
  }
  return undefined
}

/** Strips the lead-in of an answer to "What is the X?": "it's", "the X is", "use", "set it to". */
const answerBody = (message: string, spec: ParameterSpec) =>
  message
    .trim()
    .replace(new RegExp(String.raw`^(?:the\s+)?(?:${labelPattern(spec.name)})${separator}`, "iu"), "")
    .replace(/^(?:it's|it is|its|that's|that is|use|make it|set it to|let's say|say|ok,?|okay,?)\s+/iu, "")

/**
 * The parameters a message gives. `asking` names the parameter the
 * conversation asked for last: if the message does not name it, the whole
 * message is its value.
 */
export const extractParameters = (
  message: string,
  specs: ReadonlyArray<ParameterSpec>,
  options: { readonly asking?: string | undefined } = {}
): Extraction => {
  const values: Record<string, unknown> = {}
  const invalid: Array<string> = []
  const accept = (spec: ParameterSpec, raw: string) => {
    const value = coerce(spec.type, raw)
    if (value === undefined) {
      if (!invalid.includes(spec.name)) invalid.push(spec.name)
    } else {
      values[spec.name] = value
    }
  }
  const mentions = findMentions(message, specs)
  mentions.forEach((mention, i) => {
    const spec = specs.find((s) => s.name === mention.name)!
    if (mention.quoted !== undefined) return accept(spec, mention.quoted)
    const next = mentions[i + 1]?.start ?? message.length
    const slice = message.slice(mention.valueStart, Math.max(mention.valueStart, next))
    const end = slice.search(/[,;\n]/u)
    accept(spec, trimValue(end < 0 ? slice : slice.slice(0, end)))
  })
  for (const spec of specs) {
    if (spec.name in values || invalid.includes(spec.name)) continue
    if (/e-?mail/iu.test(spec.name)) {
      const email = emailPattern.exec(message)
      if (email !== null) accept(spec, email[0])
    } else if (spec.type === "integer" || spec.type === "number") {
      const near = numberNear(message, spec)
      if (near !== undefined) accept(spec, near)
    }
  }
  const asked = specs.find((spec) => spec.name === options.asking)
  if (asked !== undefined && !(asked.name in values)) {
    const index = invalid.indexOf(asked.name)
    if (index >= 0) invalid.splice(index, 1)
    accept(asked, trimValue(answerBody(message, asked)))
  }
  return { values, invalid }
}

/** The required parameters a set of values still lacks, in declaration order. */
export const missingRequired = (
  specs: ReadonlyArray<ParameterSpec>,
  values: Record<string, unknown>
): Array<ParameterSpec> =>
  specs.filter((spec) =>
    spec.required && (values[spec.name] === undefined || values[spec.name] === null || values[spec.name] === "")
  )

/** Whether a reply confirms ("yes", "go ahead") or declines ("no", "cancel"); `undefined` if neither. */
export const confirmationOf = (reply: string): "yes" | "no" | undefined => {
  const text = reply.trim().toLowerCase()
  if (/^(?:no|nope|n|cancel|stop|abort|don't|do not|never ?mind|not now)\b/u.test(text)) return "no"
  if (/^(?:yes|y|yeah|yep|sure|ok|okay|confirm(?:ed)?|go ahead|do it|proceed|please do|si|sí)\b/u.test(text)) {
    return "yes"
  }
  return undefined
}

/** Whether a message abandons the action being prepared ("cancel", "never mind"). */
export const isCancellation = (message: string): boolean =>
  /^\s*(?:cancel|stop|abort|never ?mind|forget it|no thanks)\b/iu.test(message)
