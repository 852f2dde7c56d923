/**
 * The embedded embedding model ("embedded-hashing-v1"): feature hashing of
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
import { terms } from "./Words.ts"

/** The embedder's dimension (also the pgvector index's, see migration 0005). */
export const dimensions = 512

const bigramWeight = 0.5

const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

const addFeature = (vector: Float64Array, feature: string, weight: number) => {
  const hash = fnv1a(feature)
  // The lowest bit picks the sign, so collisions cancel out on average instead of piling up.
  vector[(hash >>> 1) % dimensions] += hash & 1 ? weight : -weight
}

/** The embedding of a text: a unit vector, or all zeros for a text without topic words. */
export const embedText = (text: string): Array<number> => {
  const stems = terms(text)
  const counts = new Map<string, number>()
  const count = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1)
  for (let i = 0; i < stems.length; i++) {
    count(`u:${stems[i]}`)
    if (i + 1 < stems.length) count(`b:${stems[i]} ${stems[i + 1]}`)
  }
  const vector = new Float64Array(dimensions)
  for (const [feature, n] of counts) {
    addFeature(vector, feature, (1 + Math.log(n)) * (feature.startsWith("b:") ? bigramWeight : 1))
  }
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
