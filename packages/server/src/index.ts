export { ServerConfig, serverConfig } from "./Platform/Config.ts"
export * as Database from "./Platform/Database.ts"
export * as EmbeddedPostgres from "./Platform/EmbeddedPostgres.ts"
export { AppLive, makeApp, makeServices, RoutesLive } from "./Server.ts"
