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
  error: Schema.optionalKey(Schema.NullOr(Schema.String)).annotate({
    description: "Why processing failed (status failed)"
  })
}).annotate({ identifier: "KnowledgeFile" })
export type KnowledgeFile = typeof KnowledgeFile.Type

export const KnowledgeFileList = Schema.Struct({ files: Schema.Array(KnowledgeFile) }).annotate({
  examples: [{
    files: [{
      id: "c1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8",
      filename: "refund-policy.md",
      content_summary: "Refunds are issued within 14 days of delivery.",
      status: "ready",
      size_bytes: 2048,
      agent_id: "5f0c7a52-3c1e-4c55-9a4b-0d7f1e2a9b10",
      uploaded_at: "2026-01-15T09:30:00.000Z",
      error: null
    }]
  }]
})

/** Limits of an ingested document. */
export const maxFilenameLength = 255
export const maxContentBytes = 2 * 1024 * 1024

export const IngestRequest = Schema.Struct({
  agent_id: Schema.String.check(Schema.isMinLength(1)),
  filename: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxFilenameLength)),
  content: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxContentBytes)).annotate({
    description: "The document's text (UTF-8), at most 2 MiB"
  })
}).annotate({
  examples: [{
    agent_id: "5f0c7a52-3c1e-4c55-9a4b-0d7f1e2a9b10",
    filename: "refund-policy.md",
    content: "# Refunds\n\nRefunds are issued within 14 days of delivery."
  }]
})
export type IngestRequest = typeof IngestRequest.Type

export const IngestAccepted = Schema.Struct({
  file_id: Schema.String,
  status: Schema.Literal("pending"),
  message: Schema.String
}).annotate({
  examples: [{
    file_id: "c1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8",
    status: "pending",
    message: "document queued for ingestion"
  }]
})

export const KnowledgeFileDeleted = Schema.Struct({ success: Schema.Literal(true), message: Schema.String }).annotate({
  examples: [{ success: true, message: "knowledge file deleted" }]
})
