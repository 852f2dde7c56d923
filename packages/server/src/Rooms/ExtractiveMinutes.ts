/**
 * Minutes without a neural model (the embedded model's way: extractive and
 * deterministic). The summary quotes the sentences that carry the
 * conversation's recurring topic words, in reading order, each with its
 * author. The decisions are the people's sentences that commit to something
 * ("we decided", "agreed", "X will", "I'll", "let's", "action item"), with an
 * owner when the sentence names a participant (`@Name`, "Name will ...") or
 * its author speaks for themself ("I will ...").
 */
import { sentences } from "../Ai/Sentences.ts"
import { identifierWords, normalize, terms, termWeight } from "../Ai/Words.ts"

export interface TranscriptEntry {
  readonly author: string
  readonly role: "user" | "agent"
  readonly content: string
}

export interface ExtractedMinutes {
  readonly summary: string
  readonly decisions: ReadonlyArray<{ readonly decision: string; readonly owner: string | null }>
}

const summarySentences = 3
const maxDecisions = 20
const maxQuoteLength = 300

const commitment =
  /\b(?:decided|decide|decision|agreed|agree|approved?|will|shall|let'?s|let us|going to|action item|todo|to-do|owner|assigned?|must)\b|'ll\b/iu
const firstPerson =
  /^(?:ok(?:ay)?,?\s+)?(?:i\s+will|i'll|i\s+am\s+going\s+to|i'm\s+going\s+to|i\s+can|i\s+take|i'll\s+take)\b/iu

const quote = (text: string) => (text.length > maxQuoteLength ? `${text.slice(0, maxQuoteLength - 1)}…` : text)

const joinNames = (names: ReadonlyArray<string>) =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

/** The participant a sentence hands the work to, by `@handle` or as the subject of its verb. */
const namedOwner = (sentence: string, participants: ReadonlyArray<string>): string | undefined => {
  const text = normalize(sentence)
  const compact = text.replace(/\s+/g, "")
  let found: string | undefined
  for (const name of participants) {
    const words = identifierWords(name)
    if (words.length === 0) continue
    const handle = compact.includes(`@${words.join("")}`) || compact.includes(`@${words[0]}`)
    const subject = new RegExp(
      `(?:^|[\\s,;:])(?:${words.join("\\s+")}|${words[0]})\\s+(?:will|shall|is going to|to|should|can|takes?|owns?)\\b`,
      "u"
    )
      .test(text)
    if ((handle || subject) && (found === undefined || name.length > found.length)) found = name
  }
  return found
}

/** The minutes of a conversation; `participants` are the names of the people and agents taking part. */
export const extractMinutes = (
  transcript: ReadonlyArray<TranscriptEntry>,
  participants: ReadonlyArray<string>
): ExtractedMinutes => {
  const spoken = transcript.filter((entry) => entry.content.trim().length > 0)
  if (spoken.length === 0) return { summary: "The room closed without any messages.", decisions: [] }

  const all = spoken.flatMap((entry, index) =>
    sentences(entry.content).map((sentence) => ({ author: entry.author, role: entry.role, sentence, index }))
  )
  const frequency = new Map<string, number>()
  for (const item of all) {
    for (const term of new Set(terms(item.sentence))) frequency.set(term, (frequency.get(term) ?? 0) + 1)
  }
  const scored = all.map((item, position) => {
    const own = [...new Set(terms(item.sentence))]
    const weight = own.reduce((sum, term) => sum + termWeight(term) * Math.log2(1 + (frequency.get(term) ?? 0)), 0)
    return { ...item, position, score: own.length === 0 ? 0 : weight / Math.sqrt(own.length) }
  })
  const chosen = [...scored]
    .filter((item) => item.score > 0 && !item.sentence.trim().endsWith("?"))
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, summarySentences)
    .sort((a, b) => a.position - b.position)
  const speakers = [...new Set(spoken.map((entry) => entry.author))]
  const header = `${spoken.length} message${spoken.length === 1 ? "" : "s"} from ${joinNames(speakers)}.`
  const summary = chosen.length === 0
    ? header
    : `${header} Key points: ${chosen.map((item) => `${item.author}: “${quote(item.sentence)}”`).join(" ")}`

  const decisions: Array<{ decision: string; owner: string | null }> = []
  const seen = new Set<string>()
  for (const item of all) {
    if (item.role !== "user" || item.sentence.trim().endsWith("?") || !commitment.test(item.sentence)) continue
    const decision = quote(item.sentence.replace(/^(?:decision|decided|action item|todo)\s*[:\-–]\s*/iu, "").trim())
    const key = normalize(decision)
    if (decision.length === 0 || seen.has(key)) continue
    seen.add(key)
    const owner = namedOwner(item.sentence, participants) ??
      (firstPerson.test(item.sentence.trim()) ? item.author : null)
    decisions.push({ decision, owner })
    if (decisions.length >= maxDecisions) break
  }
  return { summary, decisions }
}

/** The decisions as the decisions agent writes them in the chat. */
export const decisionsText = (decisions: ExtractedMinutes["decisions"]): string =>
  decisions.length === 0
    ? "Decisions: none were recorded in this conversation."
    : ["Decisions:", ...decisions.map((d) => `- ${d.decision}${d.owner === null ? "" : ` (owner: ${d.owner})`}`)].join(
      "\n"
    )
