/**
 * The whole contract, declared once: every group of the platform API.
 * The server implements it, the SDK derives its client from it and
 * `/openapi.json` is generated from it.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { ActionsAdminApi } from "./Actions/ActionsAdminApi.ts"
import { ActionsApi } from "./Actions/ActionsApi.ts"
import { AdminApi } from "./Admin/AdminApi.ts"
import { AgentsAdminApi } from "./Agents/AgentsAdminApi.ts"
import { AgentsApi } from "./Agents/AgentsApi.ts"
import { AuditApi } from "./Audit/AuditApi.ts"
import { AuthApi } from "./Auth/AuthApi.ts"
import { BlueprintsApi } from "./Blueprints/BlueprintsApi.ts"
import { ChatApi } from "./Chat/ChatApi.ts"
import { ComplianceApi } from "./Compliance/ComplianceApi.ts"
import { transformDocument } from "./ContractDocument.ts"
import { CorrectionsApi } from "./Corrections/CorrectionsApi.ts"
import { ExportsApi } from "./Exports/ExportsApi.ts"
import { HealthApi } from "./Health/HealthApi.ts"
import { InboxApi } from "./Inbox/InboxApi.ts"
import { KeysApi } from "./Keys/KeysApi.ts"
import { KnowledgeApi } from "./Knowledge/KnowledgeApi.ts"
import { MeApi } from "./Me/MeApi.ts"
import { PushApi } from "./Push/PushApi.ts"
import { RoomChatsApi, RoomsApi } from "./Rooms/RoomsApi.ts"
import { ScimApi } from "./Scim/ScimApi.ts"
import { ScimRoleMappingsApi } from "./Scim/ScimRoleMappingsApi.ts"
import { SecurityPoliciesApi } from "./SecurityPolicies/SecurityPoliciesApi.ts"
import { SpaceAdminApi } from "./SpaceAdmin/SpaceAdminApi.ts"
import { UsageApi } from "./Usage/UsageApi.ts"
import { WebhooksApi } from "./Webhooks/WebhooksApi.ts"

/** The contract version (spec: "Versioning"). */
export const ApiVersion = "5.25.0"

const description =
  `Multi-tenant platform for AI agents: chat (Server-Sent Events), knowledge (RAG), actions against external systems, outbound webhooks, work rooms, compliance, SCIM 2.0.

**Two interfaces.** The API-key interface lives under \`/v1\` (also served at \`/api/v1\`): send \`Authorization: Bearer sk_live_...\`. The session interface lives under \`/api\`: sign in with POST /api/auth/login, which sets the \`Service-Token\` cookie. When both a key and a cookie are sent, the key alone decides.

**Tenancy.** The tenant always comes from the key or the session; a \`tenant_id\` in a body is ignored. Another tenant's resources answer 404.

**Errors.** Every error body is \`{"error": "<what went wrong and what to do>", "_tag": "<ErrorName>"}\` (SCIM answers in its own error schema). Validation failures are 400 (text must be valid Unicode: no NUL, no lone UTF-16 surrogate, a body's bytes UTF-8), unknown routes 404, a wrong method on a known path 405 with \`Allow\`, bodies over 1 MiB (2 MiB for ingest) 413, URLs over 8 KiB 414, bodies that are not \`application/json\` 415 (SCIM also takes \`application/scim+json\`; an operation that reads no body refuses one of another type too, so no cross-site form can trigger it; a body with a \`Content-Encoding\` is 415 too: send it uncompressed), headers over 16 KiB 431, slow clients 408. While the service cannot reach its database, a request that needs it is 503 \`ServiceUnavailable\` with \`Retry-After\` (seconds): retry then.

**Limits.** Per key and minute: chat, ingest and execute 60, other endpoints 300, and the key's own \`rate_limit_rpm\`; the stricter applies. Limited responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\`; a 429 also \`Retry-After\`.

**Request ids.** Every response carries \`X-Request-Id\` (the request's own, or a generated one).`

export class Api extends HttpApi.make("platform")
  .add(HealthApi)
  .add(AuthApi)
  .add(KeysApi)
  .add(AgentsApi)
  .add(KnowledgeApi)
  .add(ActionsApi)
  .add(ChatApi)
  .add(UsageApi)
  .add(ScimApi)
  .add(RoomsApi)
  .add(RoomChatsApi)
  .add(BlueprintsApi)
  .add(CorrectionsApi)
  .add(WebhooksApi)
  .add(ExportsApi)
  .add(SecurityPoliciesApi)
  .add(AuditApi)
  .add(SpaceAdminApi)
  .add(ComplianceApi)
  .add(AdminApi)
  .add(AgentsAdminApi)
  .add(ActionsAdminApi)
  .add(ScimRoleMappingsApi)
  .add(InboxApi)
  .add(PushApi)
  .add(MeApi)
  .annotateMerge(OpenApi.annotations({
    title: "Enterprise Agent Platform API",
    version: ApiVersion,
    description,
    transform: transformDocument
  }))
{}
