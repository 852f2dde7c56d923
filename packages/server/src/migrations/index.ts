/**
 * Every migration, in order. Never edit a landed migration: add the next file
 * (`NNNN_name.ts`, default-exporting the migration Effect) and list it here.
 * The list is static so that the bundled service (see scripts/bundle.mjs)
 * carries its migrations.
 */
import * as Migrator from "effect/sql/Migrator"
import foundation from "./0001_foundation.ts"
import identity from "./0002_identity.ts"
import catalog from "./0003_catalog.ts"
import executionsWebhooks from "./0004_executions_webhooks.ts"
import knowledgeChat from "./0005_knowledge_chat.ts"

export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation,
  "0002_identity": identity,
  "0003_catalog": catalog,
  "0004_executions_webhooks": executionsWebhooks,
  "0005_knowledge_chat": knowledgeChat
})
