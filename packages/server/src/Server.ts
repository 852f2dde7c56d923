/**
 * Composes the service: storage, the HTTP API and the scheduled workers, as
 * the process role asks (`all`, `api` or `jobs`).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, Logger } from "effect"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiScalar from "effect/http-api/HttpApiScalar"
import { Api } from "@agent-platform/domain"
import { createServer } from "node:http"
import { ModelNames } from "./Ai/ModelNames.ts"
import { AuditLog } from "./Audit/AuditLog.ts"
import { Health } from "./Health/Health.ts"
import { HealthHttp } from "./Health/HealthHttp.ts"
import { AuthenticationLive } from "./Identity/Authentication.ts"
import { Passwords } from "./Identity/Passwords.ts"
import { SessionSecret } from "./Identity/SessionSecret.ts"
import { ServerConfig } from "./Platform/Config.ts"
import { CronTicks, runWorker } from "./Platform/Cron.ts"
import { Encryption } from "./Platform/Encryption.ts"
import { DatabaseLive, type DatabaseMode, MigrationsLive } from "./Platform/Database.ts"
import { CorsLive, HttpEdgeLive } from "./Platform/HttpEdge.ts"
import { KeyValueLive } from "./Platform/KeyValue.ts"
import { notImplementedGroup } from "./Platform/NotImplemented.ts"
import { OutboundBreaker } from "./Platform/OutboundBreaker.ts"
import { BootstrapLive } from "./Tenants/Bootstrap.ts"
import { Tenants } from "./Tenants/Tenants.ts"
import { AdminHttp, SpaceAdminHttp } from "./Admin/AdminHttp.ts"
import { AuditHttp } from "./Audit/AuditHttp.ts"
import { AuthHttp } from "./Auth/AuthHttp.ts"
import { Mfa } from "./Auth/Mfa.ts"
import { Sessions } from "./Auth/Sessions.ts"
import { SignIn } from "./Auth/SignIn.ts"
import { ApiKeys } from "./Keys/ApiKeys.ts"
import { KeysHttp } from "./Keys/KeysHttp.ts"
import { Notifications } from "./Platform/Notifications.ts"
import { RateLimits } from "./Platform/RateLimits.ts"
import { IpAllowlist } from "./SecurityPolicies/IpAllowlist.ts"
import { PasswordPolicies } from "./SecurityPolicies/PasswordPolicies.ts"
import { SecurityPoliciesHttp } from "./SecurityPolicies/SecurityPoliciesHttp.ts"
import { SpaceAdmins } from "./SpaceAdmin/SpaceAdmins.ts"
import { Users } from "./Users/Users.ts"
import { UsersRepo } from "./Users/UsersRepo.ts"

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
  Layer.provideMerge(Layer.mergeAll(UsersRepo.layer, PasswordPolicies.layer, IpAllowlist.layer, Sessions.layer))
)

/** Services shared by the API and the workers. */
export const makeServices = (database: DatabaseLayer) => IdentityLive.pipe(Layer.provideMerge(makeCore(database)))

/** Every handler group of the contract. */
export const HandlersLive = Layer.mergeAll(
  HealthHttp,
  AuthHttp,
  KeysHttp,
  notImplementedGroup("agents"),
  notImplementedGroup("knowledge"),
  notImplementedGroup("actions"),
  notImplementedGroup("chat"),
  notImplementedGroup("usage"),
  notImplementedGroup("scim"),
  notImplementedGroup("rooms"),
  notImplementedGroup("roomChats"),
  notImplementedGroup("blueprints"),
  notImplementedGroup("corrections"),
  notImplementedGroup("webhooks"),
  notImplementedGroup("exports"),
  SecurityPoliciesHttp,
  AuditHttp,
  SpaceAdminHttp,
  notImplementedGroup("compliance"),
  AdminHttp,
  notImplementedGroup("agentsAdmin"),
  notImplementedGroup("actionsAdmin")
)

/** The HTTP routes: the API, `/openapi.json`, `/docs` and the edge middleware. */
export const RoutesLive = Layer.mergeAll(
  HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(Layer.provide(HandlersLive)),
  HttpApiScalar.layer(Api, { path: "/docs" }),
  HttpEdgeLive,
  CorsLive
).pipe(Layer.provide(AuthenticationLive))

/** The HTTP server on HOST:PORT, finishing in-flight requests on shutdown. */
export const HttpServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return HttpRouter.serve(RoutesLive, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, {
      host: config.host,
      port: config.port,
      gracefulShutdownTimeout: "10 seconds"
    }))
  )
}))

/** The scheduled workers this role runs, and the steps of their cycles. */
export const WorkersLive = Layer.unwrap(Effect.gen(function*() {
  const { role } = yield* ServerConfig
  const keys = yield* ApiKeys
  const sql = yield* SqlClient.SqlClient
  const apiSteps = [
    { name: "write API key last use", run: Effect.orDie(keys.flushUsage) }
  ]
  const jobsSteps = [
    {
      name: "delete sessions ended over a day ago",
      run: Effect.orDie(Effect.asVoid(sql`DELETE FROM sessions WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'`))
    }
  ]
  const api = role === "jobs" ? Layer.empty : runWorker("api", apiSteps)
  const jobs = role === "api" ? Layer.empty : runWorker("jobs", jobsSteps)
  return Layer.mergeAll(api, jobs)
}))

/** Structured logs (`LOG_FORMAT`) at `LOG_LEVEL` for everything the process runs. */
export const LoggingLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* ServerConfig
  return Layer.mergeAll(
    Logger.layer([config.logFormat === "json" ? Logger.consoleJson : Logger.consolePretty()]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel)
  )
}))

/** The whole process for its role over the given database; needs only `ServerConfig`. */
export const makeApp = (database: DatabaseLayer) =>
  Layer.unwrap(Effect.gen(function*() {
    const { role } = yield* ServerConfig
    const http = role === "jobs" ? Layer.empty : HttpServerLive
    return Layer.mergeAll(http, WorkersLive, BootstrapLive).pipe(
      Layer.provideMerge(makeServices(database)),
      Layer.provide(LoggingLive)
    )
  }))

/** The process as configured by the environment. */
export const AppLive = makeApp(DatabaseLive)
