/**
 * The embedded embedding model ("embedded-hashing-v2"): feature hashing of
 * word n-grams into 512 dimensions. Each topic word's stem and each pair of
 * consecutive stems is hashed (FNV-1a) to a dimension and a sign, weighted by
 * 1 + log(term frequency), and the vector is L2-normalized, so the dot product
 * of two vectors is their cosine similarity. Deterministic, no model file, and
 * good at what retrieval over a tenant's own documents needs most: shared
 * vocabulary, with word order counting a little through the pairs.
 *
 * Fast, as ingestion embeds every chunk: each word's stem and hashes are
 * memoized, ASCII text is split into words without a regular expression or
 * Unicode normalization (its tokens are counted in the same pass), and a
 * text's features are counted by sorting a reused typed array instead of in maps.
 */
import { Effect, Layer } from "effect"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import { countTokens, isAsciiSpace } from "./TokenCount.ts"
import { stem, stopwords, words } from "./Words.ts"

/** The embedder's dimension (also the pgvector index's, see migration 0005). */
export const dimensions = 512

const bigramWeight = 0.5

const fnvOffset = 0x811c9dc5
const fnvPrime = 0x01000193

/** FNV-1a of `text`, continuing from `state` (a hash of what came before). */
const fnv1a = (text: string, state = fnvOffset): number => {
  let hash = state
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), fnvPrime)
  return hash
}

const unigramState = fnv1a("u:")
const bigramState = fnv1a("b:")

/**
 * What ingestion repeats for every chunk, computed once per word: its stem
 * (`undefined` for a stopword), the hash of its unigram feature `u:<stem>` and
 * the FNV state after `b:<stem> `, from which each bigram's hash continues.
 * The features and their hashes are exactly those of hashing the feature strings.
 */
interface Term {
  readonly stem: string
  readonly unigram: number
  readonly bigramState: number
}

const memoLimit = 200_000
const termsByWord = new Map<string, Term | null>()

const termOf = (word: string): Term | null => {
  let term = termsByWord.get(word)
  if (term === undefined) {
    if (termsByWord.size >= memoLimit) termsByWord.clear()
    if (stopwords.has(word)) {
      term = null
    } else {
      const stemmed = stem(word)
      term = {
        stem: stemmed,
        unigram: fnv1a(stemmed, unigramState) >>> 0,
        bigramState: fnv1a(" ", fnv1a(stemmed, bigramState))
      }
    }
    termsByWord.set(word, term)
  }
  return term
}

// Scratch space reused by every call (embedding is synchronous): the text's terms and feature hashes.
let termScratch: Array<Term> = []
let unigramScratch = new Uint32Array(1024)
let bigramScratch = new Uint32Array(1024)

const isAscii = /^[\x00-\x7f]*$/u

/** ASCII whitespace as `\s` matches it: tab, line feed, vertical tab, form feed, carriage return, space. */
/**
 * Collects the text's topic terms into `termScratch`: how many, and the
 * text's tokens (`countTokens`), counted while its ASCII words are read.
 */
const collectTerms = (text: string): { readonly terms: number; readonly tokens: number } => {
  let count = 0
  if (!isAscii.test(text)) {
    for (const word of words(text)) {
      const term = termOf(word)
      if (term !== null) termScratch[count++] = term
    }
    return { terms: count, tokens: countTokens(text) }
  }
  // ASCII needs no Unicode normalization: words are runs of letters and digits, lower-cased. As in
  // `countTokens`, a word is a token per six characters begun, any other character but a space one token.
  const lower = text.toLowerCase()
  let tokens = 0
  let start = -1
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0
    const wordChar = (c >= 97 && c <= 122) || (c >= 48 && c <= 57)
    if (wordChar) {
      if (start < 0) start = i
      continue
    }
    if (start >= 0) {
      tokens += Math.ceil((i - start) / 6)
      const term = termOf(lower.slice(start, i))
      if (term !== null) termScratch[count++] = term
      start = -1
    }
    if (i < lower.length && !isAsciiSpace(c)) tokens++
  }
  return { terms: count, tokens }
}

/** Adds each distinct hash of `hashes[0, n)` with weight `(1 + log(count)) * scale`. */
const addFeatures = (vector: Float64Array, hashes: Uint32Array, n: number, scale: number) => {
  const sorted = hashes.subarray(0, n).sort()
  for (let i = 0; i < n;) {
    let j = i + 1
    while (j < n && sorted[j] === sorted[i]) j++
    const hash = sorted[i]
    const weight = (1 + Math.log(j - i)) * scale
    // The lowest bit picks the sign, so collisions cancel out on average instead of piling up.
    vector[(hash >>> 1) % dimensions] += hash & 1 ? weight : -weight
    i = j
  }
}

/** The embedding of a text (a unit vector, or all zeros for a text without topic words) and its tokens. */
const embedCounted = (text: string): { readonly vector: Array<number>; readonly tokens: number } => {
  if (termScratch.length < text.length) termScratch = new Array(text.length)
  const { terms: n, tokens } = collectTerms(text)
  if (unigramScratch.length < n) {
    unigramScratch = new Uint32Array(n * 2)
    bigramScratch = new Uint32Array(n * 2)
  }
  for (let i = 0; i < n; i++) {
    const term = termScratch[i]
    unigramScratch[i] = term.unigram
    if (i + 1 < n) bigramScratch[i] = fnv1a(termScratch[i + 1].stem, term.bigramState) >>> 0
  }
  const vector = new Float64Array(dimensions)
  addFeatures(vector, unigramScratch, n, 1)
  addFeatures(vector, bigramScratch, Math.max(0, n - 1), bigramWeight)
  let norm = 0
  for (let i = 0; i < dimensions; i++) norm += vector[i] * vector[i]
  norm = Math.sqrt(norm)
  const result = new Array<number>(dimensions)
  for (let i = 0; i < dimensions; i++) result[i] = norm === 0 ? 0 : vector[i] / norm
  return { vector: result, tokens }
}

/** The embedding of a text: a unit vector, or all zeros for a text without topic words. */
export const embedText = (text: string): Array<number> => embedCounted(text).vector

/** Cosine similarity of two vectors of the same length (0 when either is all zeros). */
export const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

/** The embeddings of the inputs, and their tokens in all. */
const embedAll = (inputs: ReadonlyArray<string>) => {
  let inputTokens = 0
  const vectors = inputs.map((input) => {
    const { tokens, vector } = embedCounted(input)
    inputTokens += tokens
    return vector
  })
  return { vectors, inputTokens }
}

/**
 * An `EmbedResponse` of a vector this embedder made, without the schema pass
 * effect's constructor runs over each element (that every element is finite):
 * each is, by construction (a unit vector or zeros). Through the constructor,
 * checking the vectors cost ingestion 1.6× computing them (measured: 240 ms
 * of CPU per 1,000 documents of 4 KB, against 150 ms to embed them). The
 * instance is what the constructor makes: the class's prototype and the field.
 */
const trustedResponse = (vector: Array<number>): EmbeddingModel.EmbedResponse =>
  Object.assign(Object.create(EmbeddingModel.EmbedResponse.prototype), { vector })

/**
 * The hashing embedder as effect's `EmbeddingModel`; usage counts the inputs'
 * tokens. `embedMany` (what ingestion calls) and `embed` (a chat's query)
 * build their responses directly (`trustedResponse`); `embed` does not go
 * through effect's request resolver either: batching concurrent queries into
 * one call saves round trips to a provider, and this embedder has none.
 */
export const make: Effect.Effect<EmbeddingModel.EmbeddingModel> = Effect.map(
  EmbeddingModel.make({
    embedMany: ({ inputs }) =>
      Effect.sync(() => {
        const { inputTokens, vectors } = embedAll(inputs)
        return { results: vectors, usage: { inputTokens } }
      })
  }),
  (model) =>
    EmbeddingModel.EmbeddingModel.of({
      ...model,
      embed: (input) =>
        Effect.sync(() => trustedResponse(embedCounted(input).vector)).pipe(Effect.withSpan("EmbeddingModel.embed")),
      embedMany: (inputs) =>
        Effect.sync(() => {
          const { inputTokens, vectors } = embedAll(inputs)
          return new EmbeddingModel.EmbedManyResponse({
            embeddings: vectors.map(trustedResponse),
            usage: new EmbeddingModel.EmbeddingUsage({ inputTokens: inputs.length === 0 ? undefined : inputTokens })
          })
        }).pipe(Effect.withSpan("EmbeddingModel.embedMany"))
    })
)

/** Provides the hashing embedder and its dimension. */
export const layer: Layer.Layer<EmbeddingModel.EmbeddingModel | EmbeddingModel.Dimensions> = Layer.merge(
  Layer.effect(EmbeddingModel.EmbeddingModel, make),
  Layer.succeed(EmbeddingModel.Dimensions, dimensions)
)
