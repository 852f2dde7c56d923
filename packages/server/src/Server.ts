/**
 * Composes the service: storage, the HTTP API and the scheduled workers, as
 * the process role asks (`all`, `api` or `jobs`).
 */
import {
  Api,
  ApiKeyAuth,
  RoomSocket as RoomSocketFrames,
  ScimAuth,
  SessionAuth,
  WarRoomsEnabled
} from "@agent-platform/domain"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, FileSystem, Layer, Logger, Path, Scope } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Etag from "effect/http/Etag"
import * as HttpPlatform from "effect/http/HttpPlatform"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import { ActionCatalog } from "./Actions/ActionCatalog.ts"
import { ActionRunner } from "./Actions/ActionRunner.ts"
import { ActionsAdminHttp, ActionsHttp } from "./Actions/ActionsHttp.ts"
import { OutboundGuard } from "./Actions/OutboundGuard.ts"
import { TenantSecrets } from "./Actions/TenantSecrets.ts"
import { AdminHttp, SpaceAdminHttp } from "./Admin/AdminHttp.ts"
import { AgentLists } from "./Agents/AgentLists.ts"
import { Agents } from "./Agents/Agents.ts"
import { AgentsAdminHttp, AgentsHttp } from "./Agents/AgentsHttp.ts"
import { ModelNames } from "./Ai/ModelNames.ts"
import { EmbeddingModelLive, LanguageModelLive } from "./Ai/Models.ts"
import { Adoption } from "./Audit/Adoption.ts"
import { AuditHttp } from "./Audit/AuditHttp.ts"
import { AuditLog } from "./Audit/AuditLog.ts"
import { AuthHttp } from "./Auth/AuthHttp.ts"
import { Mfa } from "./Auth/Mfa.ts"
import { Sessions } from "./Auth/Sessions.ts"
import { SignIn } from "./Auth/SignIn.ts"
import { Blueprints } from "./Blueprints/Blueprints.ts"
import { BlueprintsHttp } from "./Blueprints/BlueprintsHttp.ts"
import { ChatActionsLive } from "./Chat/ChatActionsLive.ts"
import { ChatEngine } from "./Chat/ChatEngine.ts"
import { ChatHistory } from "./Chat/ChatHistory.ts"
import { ChatHttp, UsageHttp } from "./Chat/ChatHttp.ts"
import { ChatLive } from "./Chat/ChatLive.ts"
import { SseHeartbeats } from "./Chat/SseHeartbeats.ts"
import { UsageReport } from "./Chat/UsageReport.ts"
import { Compliance } from "./Compliance/Compliance.ts"
import { ComplianceHttp } from "./Compliance/ComplianceHttp.ts"
import { FeatureGate } from "./Compliance/FeatureGate.ts"
import { Corrections } from "./Corrections/Corrections.ts"
import { CorrectionsHttp } from "./Corrections/CorrectionsHttp.ts"
import { ApiReferenceLive } from "./Docs/ApiReference.ts"
import { Exports } from "./Exports/Exports.ts"
import { ExportsHttp } from "./Exports/ExportsHttp.ts"
import { Health } from "./Health/Health.ts"
import { HealthHttp } from "./Health/HealthHttp.ts"
import { AuthenticationLive } from "./Identity/Authentication.ts"
import { Passwords } from "./Identity/Passwords.ts"
import { SessionSecret } from "./Identity/SessionSecret.ts"
import { Inbox } from "./Inbox/Inbox.ts"
import { InboxHttp } from "./Inbox/InboxHttp.ts"
import { ApiKeys } from "./Keys/ApiKeys.ts"
import { KeysHttp } from "./Keys/KeysHttp.ts"
import { VerifiedKeys } from "./Keys/VerifiedKeys.ts"
import { IngestionWorker } from "./Knowledge/IngestionWorker.ts"
import { KnowledgeFiles } from "./Knowledge/KnowledgeFiles.ts"
import { KnowledgeHttp } from "./Knowledge/KnowledgeHttp.ts"
import { KnowledgeLive } from "./Knowledge/KnowledgeLive.ts"
import { ActionsMcp } from "./Mcp/ActionsMcp.ts"
import { McpAuth } from "./Mcp/McpAuth.ts"
import { McpHttp } from "./Mcp/McpHttp.ts"
import { ServerConfig } from "./Platform/Config.ts"
import { CronTicks, oncePerCluster, runWorker } from "./Platform/Cron.ts"
import { DatabaseLive, DatabaseMode, MigrationsLive } from "./Platform/Database.ts"
import { vacuumDue } from "./Platform/EmbeddedVacuum.ts"
import { Encryption } from "./Platform/Encryption.ts"
import { handlersOn } from "./Platform/HandlerGroups.ts"
import { CorsLive, HttpEdgeLive, makeNodeServer } from "./Platform/HttpEdge.ts"
import { KeyValueLive } from "./Platform/KeyValue.ts"
import { jsonStdoutLogger } from "./Platform/LogWriter.ts"
import { Notifications } from "./Platform/Notifications.ts"
import { OutboundBreaker } from "./Platform/OutboundBreaker.ts"
import { RateLimits } from "./Platform/RateLimits.ts"
import { PushDelivery } from "./Push/PushDelivery.ts"
import { MeHttp, PushHttp } from "./Push/PushHttp.ts"
import { PushSubscriptions } from "./Push/PushSubscriptions.ts"
import { RoomChat } from "./Rooms/RoomChat.ts"
import { RoomMinutes } from "./Rooms/RoomMinutes.ts"
import { Rooms } from "./Rooms/Rooms.ts"
import { RoomChatsHttp, RoomsHttp } from "./Rooms/RoomsHttp.ts"
import { RoomsLive } from "./Rooms/RoomsLive.ts"
import { RoomSocket } from "./Rooms/RoomSocket.ts"
import { ScimGroups } from "./Scim/ScimGroups.ts"
import { ScimHttp, ScimLive, ScimRoleMappingsHttp } from "./Scim/ScimHttp.ts"
import { ScimRoleMappings } from "./Scim/ScimRoleMappings.ts"
import { ScimUsers } from "./Scim/ScimUsers.ts"
import { IpAllowlist } from "./SecurityPolicies/IpAllowlist.ts"
import { PasswordPolicies } from "./SecurityPolicies/PasswordPolicies.ts"
import { SecurityPoliciesHttp } from "./SecurityPolicies/SecurityPoliciesHttp.ts"
import { SpaceAdmins } from "./SpaceAdmin/SpaceAdmins.ts"
import { BootstrapLive } from "./Tenants/Bootstrap.ts"
import { Tenants } from "./Tenants/Tenants.ts"
import { Users } from "./Users/Users.ts"
import { UsersRepo } from "./Users/UsersRepo.ts"
import { WebhookDeliveryWorker } from "./Webhooks/WebhookDelivery.ts"
import { WebhooksHttp } from "./Webhooks/WebhooksHttp.ts"
import { WebhookSubscriptions } from "./Webhooks/WebhookSubscriptions.ts"

/** The database backend: PostgreSQL or embedded (tests bring their own). */
export type DatabaseLayer = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | DatabaseMode, unknown, ServerConfig>

/** The database, migrated, and the key-value store. */
export const makeStorage = (database: DatabaseLayer) =>
  KeyValueLive.pipe(Layer.provideMerge(MigrationsLive.pipe(Layer.provideMerge(database))))

/** Infrastructure every feature uses. */
const makeCore = (database: DatabaseLayer) =>
  Layer.mergeAll(Health.layer, Encryption.layer, AuditLog.layer, Notifications.layer, RateLimits.layer).pipe(
    Layer.provideMerge(
      Layer.mergeAll(CronTicks.layer, OutboundBreaker.layer, ModelNames.layer, Passwords.layer, SessionSecret.layer)
    ),
    Layer.provideMerge(makeStorage(database))
  )

/** Identity and access: users, sessions, keys, policies, tenants. */
const IdentityLive = Layer.mergeAll(SignIn.layer, Tenants.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Mfa.layer, ApiKeys.layer, SpaceAdmins.layer, Users.layer)),
  Layer.provideMerge(
    Layer.mergeAll(UsersRepo.layer, PasswordPolicies.layer, IpAllowlist.layer, Sessions.layer, VerifiedKeys.layer)
  )
)

/** The catalog: agents, actions and their execution, tenant secrets, webhook subscriptions, MCP. */
const CatalogLive = Layer.mergeAll(ActionsMcp.layer, McpAuth.layer).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Agents.layer,
      AgentLists.layer,
      ActionCatalog.layer,
      TenantSecrets.layer,
      ActionRunner.layer,
      WebhookSubscriptions.layer
    )
  ),
  Layer.provideMerge(OutboundGuard.layer)
)

/** Chat and knowledge: the models, ingestion, retrieval, the chat engine (its actions run through the catalog's runner). */
const ChatKnowledgeLive = ChatLive.pipe(
  Layer.provideMerge(ChatActionsLive),
  Layer.provideMerge(KnowledgeLive),
  Layer.provideMerge(Layer.mergeAll(LanguageModelLive, EmbeddingModelLive))
)

/** Compliance, decision records, exports and adoption: they read what the features above record. */
const ComplianceLive = Layer.mergeAll(Compliance.layer, Corrections.layer, Exports.layer, Adoption.layer).pipe(
  Layer.provideMerge(FeatureGate.layer)
)

/** Services shared by the API and the workers. */
export const makeServices = (database: DatabaseLayer) =>
  Layer.mergeAll(RoomsLive, ComplianceLive).pipe(
    Layer.provideMerge(ChatKnowledgeLive),
    Layer.provideMerge(CatalogLive),
    Layer.provideMerge(ScimLive),
    Layer.provideMerge(IdentityLive),
    Layer.provideMerge(makeCore(database))
  )

/**
 * Every handler group of the contract, each built on the services it uses
 * (its middleware's included): see `handlersOn`.
 */
export const HandlersLive = Layer.mergeAll(
  handlersOn(Health)(HealthHttp),
  handlersOn(AuditLog, Mfa, ServerConfig, Sessions, SessionAuth, SignIn, UsersRepo)(AuthHttp),
  handlersOn(ApiKeys, ServerConfig, SessionAuth)(KeysHttp),
  handlersOn(AgentLists, Agents, ApiKeyAuth)(AgentsHttp),
  handlersOn(ApiKeyAuth, KnowledgeFiles)(KnowledgeHttp),
  handlersOn(ActionCatalog, ActionRunner, ApiKeyAuth)(ActionsHttp),
  handlersOn(ApiKeyAuth, ChatEngine, ChatHistory, SseHeartbeats)(ChatHttp),
  handlersOn(ApiKeyAuth, UsageReport)(UsageHttp),
  handlersOn(ScimAuth, ScimGroups, ScimUsers, ServerConfig)(ScimHttp),
  handlersOn(Rooms, SessionAuth, WarRoomsEnabled)(RoomsHttp),
  handlersOn(RoomChat, RoomSocket, ServerConfig, SessionAuth, WarRoomsEnabled)(RoomChatsHttp),
  handlersOn(Blueprints, SessionAuth, WarRoomsEnabled)(BlueprintsHttp),
  handlersOn(Corrections, SessionAuth)(CorrectionsHttp),
  handlersOn(SessionAuth, WebhookSubscriptions)(WebhooksHttp),
  handlersOn(Exports, SessionAuth)(ExportsHttp),
  handlersOn(AuditLog, IpAllowlist, PasswordPolicies, ServerConfig, SessionAuth)(SecurityPoliciesHttp),
  handlersOn(Adoption, AuditLog, SessionAuth)(AuditHttp),
  handlersOn(SessionAuth, SpaceAdmins)(SpaceAdminHttp),
  handlersOn(Compliance, SessionAuth)(ComplianceHttp),
  handlersOn(SessionAuth, Tenants, Users)(AdminHttp),
  handlersOn(Agents, SessionAuth)(AgentsAdminHttp),
  handlersOn(ActionCatalog, SessionAuth, TenantSecrets)(ActionsAdminHttp),
  handlersOn(ScimRoleMappings, SessionAuth)(ScimRoleMappingsHttp),
  handlersOn(Inbox, SessionAuth)(InboxHttp),
  handlersOn(PushSubscriptions, SessionAuth)(PushHttp),
  handlersOn(PushSubscriptions, SessionAuth)(MeHttp)
)

/** The HTTP routes: the API, `/openapi.json`, `/docs`, `/mcp` and the edge middleware. */
export const RoutesLive = Layer.mergeAll(
  HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(Layer.provide(HandlersLive)),
  ApiReferenceLive(Api, { path: "/docs" }),
  McpHttp,
  HttpEdgeLive,
  CorsLive
).pipe(Layer.provide(AuthenticationLive))

/**
 * Builds the router's routes. Their per-request requirements (`Request<...>`
 * markers) are met by the services the handlers close over, as in
 * `HttpRouter.serve`, which strips them the same way.
 */
const buildRoutes = <A, E, R>(routes: Layer.Layer<A, E, R>) =>
  Layer.build(routes) as Effect.Effect<Context.Context<A>, E, HttpRouter.Request.Without<R> | Scope.Scope>

/** The services of the process a request fiber needs, besides its routes and loggers. */
type RequestServices = HttpPlatform.HttpPlatform | Etag.Generator | FileSystem.FileSystem | Path.Path | Scope.Scope

/**
 * How many additions a request's context keeps as overlays before copying
 * its map: the deepest request path (12) with room for the routes that add
 * more; a lookup walks at most this many overlays before the map.
 */
const requestContextDepth = 24

/**
 * The context a request fiber starts from: the routes, the loggers and the
 * HTTP platform, out of the process's `services`. Every handler group merges
 * the services it was built with into its requests' context, per request
 * (HttpApiBuilder), which is why each is built on only the services it names
 * (`handlersOn`): the process's other services would only make each of those
 * merges copy more.
 *
 * A context keeps what is added to it as a chain of overlays over its base
 * map, up to `maxDepth` of them; the next addition copies the whole map. By
 * default that is 8, and a `/v1` request adds 12 (the request, the route, the
 * edge's request info and log annotation, the handler group's services, the
 * key's principal, ...): every request copied its context at least once, ~4 µs
 * of the CPU of `GET /v1/agents` under load (measured, 5 interleaved rounds:
 * 40.3 → 35.8 µs with 16, 34.3 µs with {@link requestContextDepth}).
 */
const requestContext = <A>(services: Context.Context<RequestServices>, routes: Context.Context<A>) =>
  Context.makeUnsafe<RequestServices | A>(
    Context.merge(
      Context.pick(
        References.CurrentLoggers,
        References.MinimumLogLevel,
        HttpPlatform.HttpPlatform,
        Etag.Generator,
        FileSystem.FileSystem,
        Path.Path,
        Scope.Scope
      )(services),
      routes
    ).mapUnsafe,
    { maxDepth: requestContextDepth }
  )

/** The HTTP server on HOST:PORT, finishing in-flight requests on shutdown. */
export const HttpServerLive = Layer.effect(
  HttpServer.HttpServer,
  Effect.gen(function*() {
    const config = yield* ServerConfig
    // The routes are built before the port opens, and the handler is attached as soon as it does:
    // a request that arrives while the API is still being built would otherwise hang unanswered.
    const routes = yield* buildRoutes(Layer.provideMerge(RoutesLive, HttpRouter.layer))
    const handler = Context.get(routes, HttpRouter.HttpRouter).asHttpEffect()
    const server = yield* NodeHttpServer.make(() =>
      makeNodeServer({
        headersTimeoutMs: config.httpHeadersTimeoutMs,
        requestTimeoutMs: config.httpRequestTimeoutMs,
        maxConnectionsPerIp: config.maxConnectionsPerIp
      }), {
      host: config.host,
      port: config.port,
      gracefulShutdownTimeout: "10 seconds",
      // ws reads frames of up to 100 MiB by default; the room socket's requests are far smaller.
      websocket: { maxPayload: RoomSocketFrames.maxClientFrameBytes }
    })
    const context = requestContext(yield* Effect.context<RequestServices>(), routes)
    yield* server.serve(handler).pipe(Effect.updateContext((_: Context.Context<never>) => context))
    return server
  })
).pipe(Layer.provide(NodeHttpServer.layerHttpServices))

/** The scheduled workers this role runs, and the steps of their cycles. */
export const WorkersLive = Layer.unwrap(Effect.gen(function*() {
  const { role } = yield* ServerConfig
  const keys = yield* ApiKeys
  const roomMinutes = yield* RoomMinutes
  const sql = yield* SqlClient.SqlClient
  const mode = yield* DatabaseMode
  const apiSteps = [
    { name: "write API key last use", run: Effect.orDie(keys.flushUsage) }
  ]
  // Cleanups run once per tick for the whole cluster, not once per job process. (Expired leases of
  // webhook, push and ingestion work need no step: every claim takes them over.)
  const jobsSteps = [
    yield* oncePerCluster({
      name: "delete sessions ended over a day ago",
      run: Effect.orDie(
        Effect.asVoid(
          sql`DELETE FROM sessions WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'`
        )
      )
    }),
    // In every job process: each room is claimed under a lease (RoomMinutes), like the other queues.
    { name: "write the minutes of rooms closed without them", run: roomMinutes.recoverDue },
    // PGlite has no autovacuum: the embedded database is vacuumed here (a PostgreSQL server vacuums itself).
    ...(mode.kind === "embedded"
      ? [{
        name: "vacuum the embedded database",
        run: Effect.orDie(Effect.asVoid(Effect.provideService(vacuumDue, SqlClient.SqlClient, sql)))
      }]
      : [])
  ]
  const api = role === "jobs" ? Layer.empty : runWorker("api", apiSteps)
  const jobs = role === "api"
    ? Layer.empty
    : Layer.mergeAll(
      runWorker("jobs", jobsSteps),
      WebhookDeliveryWorker.layer,
      IngestionWorker.layer,
      PushDelivery.worker
    )
  return Layer.mergeAll(api, jobs)
}))

/** Structured logs (`LOG_FORMAT`) at `LOG_LEVEL` for everything the process runs. */
export const LoggingLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return Layer.mergeAll(
    Logger.layer([config.logFormat === "json" ? jsonStdoutLogger() : Logger.consolePretty()]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel)
  )
}))

/** The whole process for its role over the given database; needs only `ServerConfig`. */
export const makeApp = (database: DatabaseLayer) =>
  Layer.unwrap(Effect.gen(function*() {
    const { role } = yield* ServerConfig
    const http = role === "jobs" ? Layer.empty : HttpServerLive
    // The first tenant and its admin exist before the port opens: /health never answers for a half-made service.
    return Layer.mergeAll(http, WorkersLive).pipe(
      Layer.provide(BootstrapLive),
      Layer.provideMerge(makeServices(database)),
      Layer.provide(LoggingLive)
    )
  }))

/** The process as configured by the environment. */
export const AppLive = makeApp(DatabaseLive)
