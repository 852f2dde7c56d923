/**
 * Chat as the server wires it: the engine, history and usage, with the router
 * and the repository. Needs SqlClient, LanguageModel, EmbeddingModel,
 * Retrieval (KnowledgeLive) and an implementation of ChatActions.
 */
import { Layer } from "effect"
import { ChatEngine } from "./ChatEngine.ts"
import { ChatHistory } from "./ChatHistory.ts"
import { ChatRepo } from "./ChatRepo.ts"
import { ChatWrites } from "./ChatWrites.ts"
import { Router } from "./Router.ts"
import { SseHeartbeats } from "./SseHeartbeats.ts"
import { UsageReport } from "./UsageReport.ts"

export const ChatLive = Layer.mergeAll(ChatEngine.layer, ChatHistory.layer, UsageReport.layer, SseHeartbeats.layer)
  .pipe(
    Layer.provideMerge(Router.layer),
    Layer.provideMerge(ChatWrites.layer),
    Layer.provide(ChatRepo.layer)
  )
