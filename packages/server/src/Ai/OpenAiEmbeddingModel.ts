/**
 * effect's `EmbeddingModel` over an OpenAI-compatible `/embeddings`: inputs
 * sent in batches of 64, vectors put back in input order by their `index`,
 * usage from the provider's `prompt_tokens`.
 */
import { Effect, Layer, Schema } from "effect"
import * as AiError from "effect/ai/AiError"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import type * as HttpClient from "effect/http/HttpClient"
import { OpenAiClient, type OpenAiConfig } from "./OpenAiClient.ts"

const batchSize = 64

const EmbeddingsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    index: Schema.optional(Schema.NullOr(Schema.Number)),
    embedding: Schema.Array(Schema.Number)
  })),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.optional(Schema.NullOr(Schema.Number)) })))
})

const invalid = (description: string) =>
  AiError.make({
    module: "OpenAiCompatible",
    method: "embedMany",
    reason: new AiError.InvalidResponseError({ description })
  })

/** The embedding model of an OpenAI-compatible provider. */
export const make = Effect.gen(function*() {
  const client = yield* OpenAiClient
  const embedBatch = Effect.fnUntraced(function*(inputs: ReadonlyArray<string>) {
    const json = yield* client.postJson(
      "/embeddings",
      { model: client.config.embeddingModel, input: inputs },
      "embedMany"
    )
    const response = yield* Schema.decodeUnknownEffect(EmbeddingsResponse)(json).pipe(
      Effect.mapError((error) => invalid(`unexpected embeddings response: ${error.message}`))
    )
    if (response.data.length !== inputs.length) {
      return yield* invalid(`the provider returned ${response.data.length} embeddings for ${inputs.length} inputs`)
    }
    const vectors = response.data
      .map((item, position) => ({ at: item.index ?? position, vector: [...item.embedding] }))
      .sort((a, b) => a.at - b.at)
      .map((item) => item.vector)
    return { vectors, tokens: response.usage?.prompt_tokens ?? undefined }
  })
  return yield* EmbeddingModel.make({
    embedMany: Effect.fnUntraced(function*({ inputs }) {
      const results: Array<Array<number>> = []
      let tokens: number | undefined = undefined
      for (let from = 0; from < inputs.length; from += batchSize) {
        const batch = yield* embedBatch(inputs.slice(from, from + batchSize))
        results.push(...batch.vectors)
        if (batch.tokens !== undefined) tokens = (tokens ?? 0) + batch.tokens
      }
      return { results, usage: { inputTokens: tokens } }
    })
  })
})

/** The provider's EmbeddingModel for a configuration. */
export const layer = (config: OpenAiConfig): Layer.Layer<EmbeddingModel.EmbeddingModel, never, HttpClient.HttpClient> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, make).pipe(Layer.provide(OpenAiClient.layer(config)))
