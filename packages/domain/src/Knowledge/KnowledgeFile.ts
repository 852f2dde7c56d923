/** Knowledge file schemas (spec: "Knowledge file", states). */
import { Schema } from "effect"

/**
 * pending → processing → ready, as the spec's state table says; a document
 * that cannot be processed ends in `failed` with an `error`.
 */
export const KnowledgeFileStatus = Schema.Literals(["pending", "processing", "ready", "failed"])
export type KnowledgeFileStatus = typeof KnowledgeFileStatus.Type

export const KnowledgeFile = Schema.Struct({
  id: Schema.String,
  filename: Schema.String,
  content_summary: Schema.String,
  status: KnowledgeFileStatus,
  size_bytes: Schema.Int,
  agent_id: Schema.String,
  uploaded_at: Schema.String.annotate({ description: "ISO 8601 UTC" }),
  error: Schema.optionalKey(Schema.NullOr(Schema.String)).annotate({ description: "Why processing failed (status failed)" })
}).annotate({ identifier: "KnowledgeFile" })
export type KnowledgeFile = typeof KnowledgeFile.Type

export const KnowledgeFileList = Schema.Struct({ files: Schema.Array(KnowledgeFile) })

/** Limits of an ingested document. */
export const maxFilenameLength = 255
export const maxContentBytes = 2 * 1024 * 1024

export const IngestRequest = Schema.Struct({
  agent_id: Schema.String.check(Schema.isMinLength(1)),
  filename: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxFilenameLength)),
  content: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxContentBytes)).annotate({
    description: "The document's text (UTF-8), at most 2 MiB"
  })
})
export type IngestRequest = typeof IngestRequest.Type

export const IngestAccepted = Schema.Struct({
  file_id: Schema.String,
  status: Schema.Literal("pending"),
  message: Schema.String
})

export const KnowledgeFileDeleted = Schema.Struct({ success: Schema.Literal(true), message: Schema.String })
