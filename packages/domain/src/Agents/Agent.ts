/** Agent schemas (spec: "Agent (list item)", "Agent detail"). */
import { Schema } from "effect"
import { KnowledgeFileStatus } from "../Knowledge/KnowledgeFile.ts"

export const Agent = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  summary: Schema.String,
  is_primary: Schema.Boolean,
  group_id: Schema.String.annotate({ description: "The space's id" }),
  space_code: Schema.String
}).annotate({ identifier: "Agent" })
export type Agent = typeof Agent.Type

export const AgentList = Schema.Struct({ agents: Schema.Array(Agent) })

export const AgentDetail = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  summary: Schema.String,
  is_primary: Schema.Boolean,
  group_id: Schema.String,
  space_code: Schema.String,
  actions: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, description: Schema.String })),
  knowledge_files: Schema.Array(Schema.Struct({
    id: Schema.String,
    filename: Schema.String,
    content_summary: Schema.String,
    status: KnowledgeFileStatus
  }))
}).annotate({ identifier: "AgentDetail" })
export type AgentDetail = typeof AgentDetail.Type
