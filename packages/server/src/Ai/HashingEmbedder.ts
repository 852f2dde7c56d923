/**
 * The embedded embedding model ("embedded-hashing-v2"): feature hashing of
 * word n-grams into 512 dimensions. Each topic word's stem and each pair of
 * consecutive stems is hashed (FNV-1a) to a dimension and a sign, weighted by
 * 1 + log(term frequency), and the vector is L2-normalized, so the dot product
 * of two vectors is their cosine similarity. Deterministic, no model file, and
 * good at what retrieval over a tenant's own documents needs most: shared
 * vocabulary, with word order counting a little through the pairs.
 */
import { Effect, Layer } from "effect"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import { countTokens } from "./TokenCount.ts"
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
 * ("" for a stopword), the hash of its unigram feature `u:<stem>` and the
 * FNV state after `b:<stem> `, from which each bigram's hash continues. The
 * features and their hashes are exactly those of hashing the feature strings.
 */
const memoLimit = 200_000
const stems = new Map<string, string>()
const unigramHashes = new Map<string, number>()
const bigramStates = new Map<string, number>()

const remember = <V>(memo: Map<string, V>, key: string, make: () => V): V => {
  let value = memo.get(key)
  if (value === undefined) {
    if (memo.size >= memoLimit) memo.clear()
    value = make()
    memo.set(key, value)
  }
  return value
}

const stemsOf = (text: string): Array<string> => {
  const result: Array<string> = []
  for (const word of words(text)) {
    const stemmed = remember(stems, word, () => (stopwords.has(word) ? "" : stem(word)))
    if (stemmed !== "") result.push(stemmed)
  }
  return result
}

const addFeature = (vector: Float64Array, hash: number, weight: number) => {
  // The lowest bit picks the sign, so collisions cancel out on average instead of piling up.
  vector[(hash >>> 1) % dimensions] += hash & 1 ? weight : -weight
}

/** The embedding of a text: a unit vector, or all zeros for a text without topic words. */
export const embedText = (text: string): Array<number> => {
  const terms = stemsOf(text)
  // Feature hash → count; unigrams and bigrams apart, as their features never share a string.
  const unigrams = new Map<number, number>()
  const bigrams = new Map<number, number>()
  for (let i = 0; i < terms.length; i++) {
    const unigram = remember(unigramHashes, terms[i], () => fnv1a(terms[i], unigramState) >>> 0)
    unigrams.set(unigram, (unigrams.get(unigram) ?? 0) + 1)
    if (i + 1 < terms.length) {
      const state = remember(bigramStates, terms[i], () => fnv1a(" ", fnv1a(terms[i], bigramState)))
      const bigram = fnv1a(terms[i + 1], state) >>> 0
      bigrams.set(bigram, (bigrams.get(bigram) ?? 0) + 1)
    }
  }
  const vector = new Float64Array(dimensions)
  for (const [hash, n] of unigrams) addFeature(vector, hash, 1 + Math.log(n))
  for (const [hash, n] of bigrams) addFeature(vector, hash, (1 + Math.log(n)) * bigramWeight)
  let norm = 0
  for (const x of vector) norm += x * x
  norm = Math.sqrt(norm)
  return Array.from(vector, (x) => (norm === 0 ? 0 : x / norm))
}

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

/** The hashing embedder as effect's `EmbeddingModel`; usage counts the inputs' tokens. */
export const make: Effect.Effect<EmbeddingModel.EmbeddingModel> = EmbeddingModel.make({
  embedMany: ({ inputs }) =>
    Effect.sync(() => ({
      results: inputs.map(embedText),
      usage: { inputTokens: inputs.reduce((sum, input) => sum + countTokens(input), 0) }
    }))
})

/** Provides the hashing embedder and its dimension. */
export const layer: Layer.Layer<EmbeddingModel.EmbeddingModel | EmbeddingModel.Dimensions> = Layer.merge(
  Layer.effect(EmbeddingModel.EmbeddingModel, make),
  Layer.succeed(EmbeddingModel.Dimensions, dimensions)
)
