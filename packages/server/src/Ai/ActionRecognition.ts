/**
 * How the embedded model tells that a message asks to run one of the agent's
 * actions: the words of the action's name (`create_ticket` → create, ticket)
 * all appear in the message, or most of them do and the message also echoes
 * the action's description. Questions that start with what/why/how/when/...
 * ask for information, never for an action.
 */
import { identifierWords, stem, stopwords, terms } from "./Words.ts"

/** An action as offered to the model (a tool's name and description). */
export interface ActionCandidate {
  readonly name: string
  readonly description: string
}

const informationQuestion = /^\s*(?:what|what's|whats|why|how|when|where|who|which|whose|is|are|does|do|did)\b/iu

const coverage = (wanted: ReadonlyArray<string>, present: ReadonlySet<string>) =>
  wanted.length === 0 ? 0 : wanted.filter((term) => present.has(term)).length / wanted.length

/** The action a message asks to run, if any (the best-matching one). */
export const recognizeAction = <A extends ActionCandidate>(
  message: string,
  candidates: ReadonlyArray<A>
): A | undefined => {
  if (informationQuestion.test(message)) return undefined
  const present = new Set(terms(message))
  let best: { candidate: A; score: number } | undefined
  for (const candidate of candidates) {
    const nameTerms = [...new Set(identifierWords(candidate.name).filter((word) => !stopwords.has(word)).map(stem))]
    const descriptionTerms = [...new Set(terms(candidate.description))]
    const byName = coverage(nameTerms, present)
    const byDescription = coverage(descriptionTerms, present)
    const matches = byName === 1 || (byName >= 0.5 && byDescription >= 0.5)
    if (!matches) continue
    const score = byName * 2 + byDescription
    if (best === undefined || score > best.score) best = { candidate, score }
  }
  return best?.candidate
}
