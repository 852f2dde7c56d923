/**
 * Words as the embedded models see them: Unicode-normalized, lower-cased,
 * accent-free terms reduced to their Porter stems (the `stemmer` package),
 * and the stopwords that carry no topic. The hashing embedder, the extractive
 * answerer, the router and the parameter extractor all read text through this
 * module so they agree on what "the same word" means.
 */
import { stemmer } from "stemmer"

const stopwordList = [
  "a",
  "about",
  "above",
  "after",
  "again",
  "all",
  "also",
  "am",
  "an",
  "and",
  "any",
  "are",
  "as",
  "at",
  "be",
  "because",
  "been",
  "before",
  "being",
  "below",
  "between",
  "both",
  "but",
  "by",
  "can",
  "could",
  "did",
  "do",
  "does",
  "doing",
  "down",
  "during",
  "each",
  "either",
  "else",
  "ever",
  "for",
  "from",
  "further",
  "had",
  "has",
  "have",
  "having",
  "he",
  "her",
  "here",
  "hers",
  "him",
  "his",
  "how",
  "i",
  "if",
  "in",
  "into",
  "is",
  "it",
  "its",
  "itself",
  "just",
  "let",
  "may",
  "me",
  "might",
  "mine",
  "more",
  "most",
  "must",
  "my",
  "no",
  "nor",
  "not",
  "now",
  "of",
  "off",
  "on",
  "once",
  "only",
  "or",
  "other",
  "our",
  "ours",
  "out",
  "over",
  "own",
  "please",
  "same",
  "shall",
  "she",
  "should",
  "so",
  "some",
  "such",
  "than",
  "that",
  "the",
  "their",
  "theirs",
  "them",
  "then",
  "there",
  "these",
  "they",
  "this",
  "those",
  "through",
  "to",
  "too",
  "under",
  "until",
  "up",
  "us",
  "very",
  "was",
  "we",
  "were",
  "what",
  "when",
  "where",
  "which",
  "while",
  "who",
  "whom",
  "whose",
  "why",
  "will",
  "with",
  "would",
  "yes",
  "you",
  "your",
  "yours",
  "tell",
  "know",
  "s",
  "t",
  "don",
  "doesn",
  "isn",
  "aren",
  "d",
  "ll",
  "m",
  "re",
  "ve"
]

/** Words that never name a topic. */
export const stopwords: ReadonlySet<string> = new Set(stopwordList)

/**
 * Common verbs and adverbs that appear in questions about anything ("how long
 * does it take"): they count, but little, when judging whether a text is
 * about what the question asks.
 */
const weakList = [
  "get",
  "got",
  "make",
  "made",
  "take",
  "took",
  "need",
  "want",
  "use",
  "used",
  "work",
  "working",
  "long",
  "much",
  "many",
  "often",
  "soon",
  "time",
  "way",
  "thing",
  "things",
  "give",
  "go",
  "going",
  "come",
  "say",
  "said",
  "see",
  "look",
  "like",
  "new",
  "old",
  "good",
  "best",
  "find",
  "help",
  "ask",
  "told",
  "tell",
  "show",
  "happen",
  "happens",
  "usually",
  "exactly",
  "really",
  "able",
  "allowed",
  "possible",
  "someone",
  "something",
  "anything",
  "people",
  "one"
]

/** Lower-case, strip accents (NFKD without combining marks), keep letters and digits. */
export const normalize = (text: string): string => text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase()

/** The raw word tokens of a text, in order (letters and digits; apostrophes split). */
export const words = (text: string): Array<string> => normalize(text).match(/[\p{L}\p{N}]+/gu) ?? []

/**
 * A word's stem by Martin Porter's algorithm (refunds, refunded → refund;
 * arrives, arrival → arriv; policy, policies → polici). Precision matters
 * less than both sides of a comparison getting the same stem; numbers and
 * words of three letters or fewer are kept as they are.
 */
export const stem = (word: string): string => (word.length <= 3 || /^\d+$/u.test(word) ? word : stemmer(word))

/** The stems of a text's topic words (stopwords removed), in order. */
export const terms = (text: string): Array<string> => words(text).filter((word) => !stopwords.has(word)).map(stem)

const weakWords: ReadonlySet<string> = new Set(weakList.map((word) => stem(word)))

/** How much a term says about a topic: 0.2 for common verbs and adverbs, else 1. */
export const termWeight = (term: string): number => (weakWords.has(term) ? 0.2 : 1)

/**
 * The share of a question's topic weight that a text's terms cover (0 to 1).
 * A text is about what the question asks when this is above one half — and it
 * covers at least one full-weight term.
 */
export const topicCoverage = (question: ReadonlyArray<string>, text: ReadonlySet<string>): number => {
  const unique = [...new Set(question)]
  const total = unique.reduce((sum, term) => sum + termWeight(term), 0)
  if (total === 0) return 0
  const matched = unique.filter((term) => text.has(term))
  if (!matched.some((term) => termWeight(term) === 1)) return 0
  return matched.reduce((sum, term) => sum + termWeight(term), 0) / total
}

/** Splits an identifier or phrase (`create_ticket`, `orderId`, `Billing Bot`) into its words. */
export const identifierWords = (identifier: string): Array<string> =>
  words(identifier.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " "))
