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
import accessHardening from "./0006_access_hardening.ts"
import rooms from "./0007_rooms.ts"
import scim from "./0008_scim.ts"
import compliance from "./0009_compliance.ts"
import webhookSecretRotation from "./0010_webhook_secret_rotation.ts"
import vapidKeys from "./0012_vapid_keys.ts"
import cronRuns from "./0013_cron_runs.ts"
import agentListCache from "./0014_agent_list_cache.ts"
import webhookClaimIndexes from "./0016_webhook_claim_indexes.ts"
import knowledgeWritePath from "./0017_knowledge_write_path.ts"
import knowledgeFileParts from "./0018_knowledge_file_parts.ts"
import knowledgeChunkStorage from "./0020_knowledge_chunk_storage.ts"
import knowledgeVocabulary from "./0021_knowledge_vocabulary.ts"
import roomAnswersAndMinutes from "./0022_room_answers_and_minutes.ts"
import pushClaimToken from "./0023_push_claim_token.ts"
import roomPeriods from "./0024_room_periods.ts"
import knowledgeChunkLexemes from "./0025_knowledge_chunk_lexemes.ts"
import knowledgeChunkWriteCost from "./0026_knowledge_chunk_write_cost.ts"

export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation,
  "0002_identity": identity,
  "0003_catalog": catalog,
  "0004_executions_webhooks": executionsWebhooks,
  "0005_knowledge_chat": knowledgeChat,
  "0006_access_hardening": accessHardening,
  "0007_rooms": rooms,
  "0008_scim": scim,
  "0009_compliance": compliance,
  "0010_webhook_secret_rotation": webhookSecretRotation,
  "0012_vapid_keys": vapidKeys,
  "0013_cron_runs": cronRuns,
  "0014_agent_list_cache": agentListCache,
  "0016_webhook_claim_indexes": webhookClaimIndexes,
  "0017_knowledge_write_path": knowledgeWritePath,
  "0018_knowledge_file_parts": knowledgeFileParts,
  "0020_knowledge_chunk_storage": knowledgeChunkStorage,
  "0021_knowledge_vocabulary": knowledgeVocabulary,
  "0022_room_answers_and_minutes": roomAnswersAndMinutes,
  "0023_push_claim_token": pushClaimToken,
  "0024_room_periods": roomPeriods,
  "0025_knowledge_chunk_lexemes": knowledgeChunkLexemes,
  "0026_knowledge_chunk_write_cost": knowledgeChunkWriteCost
})
