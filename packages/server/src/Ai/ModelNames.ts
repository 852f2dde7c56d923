/**
 * The names of the models chat and knowledge use, as `/health` reports them:
 * the OpenAI-compatible provider when `OPENAI_BASE_URL` is set, else the
 * embedded deterministic local model.
 */
import { Context, Effect, Layer, Option } from "effect"
import { ServerConfig } from "../Platform/Config.ts"

export const embeddedLanguageModelName =
  "embedded-extractive-v2 (deterministic local model: retrieval, extractive answers, slot-filling)"
export const embeddedEmbeddingModelName = "embedded-hashing-v2 (feature-hashed word n-grams, 512 dimensions)"

export class ModelNames extends Context.Service<ModelNames, {
  readonly languageModel: string
  readonly embeddingModel: string
}>()("@agent-platform/server/Ai/ModelNames") {
  static readonly layer = Layer.effect(
    ModelNames,
    Effect.map(ServerConfig, (config) =>
      Option.isSome(config.openAiBaseUrl)
        ? {
          languageModel: `openai-compatible:${config.openAiModel}`,
          embeddingModel: `openai-compatible:${config.openAiEmbeddingModel}`
        }
        : { languageModel: embeddedLanguageModelName, embeddingModel: embeddedEmbeddingModelName })
  )
}
