/**
 * Knowledge as the server wires it: files, the ingestion queue (its batches;
 * add `IngestionWorker.layer` to the jobs role to run them) and retrieval,
 * over the repository and the database's search capabilities. Needs
 * SqlClient, EmbeddingModel and ModelNames (and uses Notifications when
 * provided).
 */
import { Layer } from "effect"
import { IngestionQueue } from "./IngestionQueue.ts"
import { KnowledgeFiles } from "./KnowledgeFiles.ts"
import { KnowledgeRepo } from "./KnowledgeRepo.ts"
import { Retrieval } from "./Retrieval.ts"
import { SearchCapabilities } from "./SearchCapabilities.ts"

export const KnowledgeLive = Layer.mergeAll(KnowledgeFiles.layer, IngestionQueue.layer, Retrieval.layer).pipe(
  Layer.provide(KnowledgeRepo.layer),
  Layer.provideMerge(SearchCapabilities.layer)
)
