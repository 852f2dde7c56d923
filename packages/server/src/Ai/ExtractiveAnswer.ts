/**
 * The embedded model's answers: the sentences of the retrieved excerpts that
 * best cover the question's topic words, quoted with their file name. A
 * sentence counts only if it covers more than half of the question's weight
 * (common verbs weigh little; see `topicCoverage`), so a question the
 * knowledge does not address gets "I don't know" instead of a near miss.
 */
import { cosine, embedText } from "./HashingEmbedder.ts"
import type { Excerpt } from "./KnowledgeContext.ts"
import { blocks, sentencesOfBlock } from "./Sentences.ts"
import { terms, topicCoverage } from "./Words.ts"

export interface Answer {
  readonly text: string
  readonly sources: ReadonlyArray<string>
}

interface Candidate {
  /** Position in the excerpts, to quote chosen sentences in reading order. */
  readonly position: number
  readonly filename: string
  readonly sentence: string
  readonly coverage: number
  readonly score: number
}

/** A sentence must cover more than this share of the question's weight. */
const minimumCoverage = 0.5
const maxSentences = 3

/**
 * The sentences of an excerpt, each with the terms of the section heading it
 * sits under. Sentences wrapped over several lines are read whole.
 */
const sentencesOf = (excerpt: Excerpt) => {
  const result: Array<{ sentence: string; terms: Set<string> }> = []
  let headingTerms: Array<string> = []
  for (const block of blocks(excerpt.content)) {
    if (block.kind === "heading") {
      headingTerms = terms(block.text)
      continue
    }
    for (const sentence of sentencesOfBlock(block)) {
      const own = terms(sentence)
      // Fragments carry no answer of their own ("Refund policy", "Contact:").
      if (own.length < 3 && sentence.split(/\s+/u).length < 4) {
        headingTerms = own
        continue
      }
      result.push({ sentence, terms: new Set([...own, ...headingTerms]) })
    }
  }
  return result
}

const bigrams = (stems: ReadonlyArray<string>) => stems.slice(1).map((stem, i) => `${stems[i]} ${stem}`)

/** The best answer the excerpts hold for a question, or `undefined` if none is relevant. */
export const answerFrom = (question: string, excerpts: ReadonlyArray<Excerpt>): Answer | undefined => {
  const questionStems = terms(question)
  if (questionStems.length === 0) return undefined
  // "How long", "how many", "when": an answer with a number in it is likelier the one.
  const wantsNumber = /^\s*(?:how (?:long|many|much|soon|often|old|far)|when)\b/iu.test(question)
  const questionVector = embedText(question)
  const questionPairs = bigrams(questionStems)
  const seen = new Set<string>()
  const candidates: Array<Candidate> = []
  for (const excerpt of excerpts) {
    for (const { sentence, terms: sentenceTerms } of sentencesOf(excerpt)) {
      const key = sentence.toLowerCase()
      if (seen.has(key)) continue // overlapping chunks repeat sentences
      seen.add(key)
      const coverage = topicCoverage(questionStems, sentenceTerms)
      if (coverage === 0) continue
      const sentencePairs = new Set(bigrams(terms(sentence)))
      const pairBonus = 0.1 * questionPairs.filter((pair) => sentencePairs.has(pair)).length
      const numberBonus = wantsNumber && /\d/u.test(sentence) ? 0.1 : 0
      const score = coverage + pairBonus + numberBonus + 0.1 * cosine(questionVector, embedText(sentence))
      candidates.push({ position: candidates.length, filename: excerpt.filename, sentence, coverage, score })
    }
  }
  const ranked = candidates.filter((c) => c.coverage > minimumCoverage).sort((a, b) => b.score - a.score)
  if (ranked.length === 0) return undefined
  const chosen = ranked.filter((c) => c.score >= ranked[0].score * 0.85).slice(0, maxSentences).sort((a, b) =>
    a.position - b.position
  )
  const byFile = new Map<string, Array<string>>()
  for (const c of chosen) byFile.set(c.filename, [...(byFile.get(c.filename) ?? []), c.sentence])
  const text = [...byFile].map(([filename, quoted]) => `According to ${filename}: ${quoted.join(" ")}`).join("\n")
  return { text, sources: [...byFile.keys()] }
}

/** What the embedded model says when its knowledge holds nothing relevant. */
export const nothingRelevant =
  "I don't know: nothing in my knowledge covers that. Try rephrasing, or ask about a topic from the documents I have."
