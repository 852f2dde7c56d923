/**
 * The models chat and knowledge use, chosen by the configuration: the
 * OpenAI-compatible provider when `OPENAI_BASE_URL` is set (over effect's
 * fetch HttpClient), else the embedded models. `ModelNames` reports the same
 * choice to `/health`.
 */
import { Effect, Layer, Option } from "effect"
import type * as EmbeddingModel from "effect/ai/EmbeddingModel"
import type * as LanguageModel from "effect/ai/LanguageModel"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { ServerConfig, type ServerConfigShape } from "../Platform/Config.ts"
import * as EmbeddedLanguageModel from "./EmbeddedLanguageModel.ts"
import * as HashingEmbedder from "./HashingEmbedder.ts"
import type { OpenAiConfig } from "./OpenAiClient.ts"
import * as OpenAiEmbeddingModel from "./OpenAiEmbeddingModel.ts"
import * as OpenAiLanguageModel from "./OpenAiLanguageModel.ts"

/** The provider configuration, if `OPENAI_BASE_URL` is set. */
export const providerConfig = (config: ServerConfigShape): Option.Option<OpenAiConfig> =>
  Option.map(config.openAiBaseUrl, (baseUrl) => ({
    baseUrl,
    apiKey: config.openAiApiKey,
    model: config.openAiModel,
    embeddingModel: config.openAiEmbeddingModel
  }))

/**
 * The language model: the provider, or the embedded extractive model. Uses
 * the process's `OutboundBreaker` when it is provided.
 */
export const LanguageModelLive: Layer.Layer<LanguageModel.LanguageModel, never, ServerConfig> = Layer.unwrap(
  Effect.map(ServerConfig, (config) =>
    Option.match(providerConfig(config), {
      onNone: () => EmbeddedLanguageModel.layer,
      onSome: (provider) => OpenAiLanguageModel.layer(provider).pipe(Layer.provide(FetchHttpClient.layer))
    }))
)

/** The embedding model: the provider's, or the hashing embedder (512 dimensions). */
export const EmbeddingModelLive: Layer.Layer<EmbeddingModel.EmbeddingModel, never, ServerConfig> = Layer.unwrap(
  Effect.map(ServerConfig, (config) =>
    Option.match(providerConfig(config), {
      onNone: () => HashingEmbedder.layer,
      onSome: (provider) => OpenAiEmbeddingModel.layer(provider).pipe(Layer.provide(FetchHttpClient.layer))
    }))
)
