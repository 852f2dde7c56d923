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

const agentExample = {
  id: "5f0c7a52-3c1e-4c55-9a4b-0d7f1e2a9b10",
  name: "Support",
  summary: "Answers questions about orders, refunds and shipping",
  is_primary: true,
  group_id: "0b8e4f0e-8f7a-4d7b-9a63-1c2d3e4f5a6b",
  space_code: "support"
}

export const AgentList = Schema.Struct({ agents: Schema.Array(Agent) }).annotate({
  examples: [{ agents: [agentExample] }]
})

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
}).annotate({
  identifier: "AgentDetail",
  examples: [{
    ...agentExample,
    actions: [{
      id: "9d2f6c1a-7b3e-4f80-8a91-2b3c4d5e6f70",
      name: "Create ticket",
      description: "Opens a ticket in the helpdesk"
    }],
    knowledge_files: [{
      id: "c1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8",
      filename: "refund-policy.md",
      content_summary: "Refunds are issued within 14 days of delivery.",
      status: "ready"
    }]
  }]
})
export type AgentDetail = typeof AgentDetail.Type
