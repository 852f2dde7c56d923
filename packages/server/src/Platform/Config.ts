/**
 * The service's configuration, read once from the environment with effect's
 * Config. Every setting has a default that works on a fresh machine; a bad
 * value fails start-up with one line naming the variable.
 */
import { Config, Context, Layer, type LogLevel, Option, Redacted, Schema } from "effect"

/** Which parts of the service this process runs (API replicas and job workers scale separately). */
export type ProcessRole = "all" | "api" | "jobs"

export interface ServerConfigShape {
  readonly host: string
  readonly port: number
  /** Real PostgreSQL; `None` runs the embedded PGlite database in `dataDir`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** Connections this process may open to `DATABASE_URL` (PostgreSQL mode). */
  readonly databasePoolSize: number
  readonly dataDir: string
  /** Redis for the key-value store and shared rate limits; `None` keeps them in PostgreSQL / memory. */
  readonly redisUrl: Option.Option<Redacted.Redacted>
  /** Namespaces every Redis key, so several deployments (or test runs) can share one Redis. */
  readonly redisPrefix: string
  readonly sessionSecret: Option.Option<Redacted.Redacted>
  /** Key material for secrets at rest; unset = derived from the session secret. */
  readonly encryptionKey: Option.Option<Redacted.Redacted>
  readonly role: ProcessRole
  readonly logLevel: LogLevel.LogLevel
  /** `json` (one object per line) or `pretty`; default json unless stdout is a terminal. */
  readonly logFormat: "json" | "pretty"
  readonly bootstrapTenant: string
  readonly bootstrapAdminEmail: string
  readonly bootstrapAdminPassword: Option.Option<Redacted.Redacted>
  /** Origins allowed by CORS; empty = CORS off, `*` = any origin. */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * How many proxies of the deployment stand in front (0: none, the socket's
   * peer is the client): the client IP is the address the outermost of them
   * appended to X-Forwarded-For (ClientIp.ts).
   */
  readonly trustedProxies: number
  /** Largest JSON body accepted, in bytes (ingest allows its own, larger, limit). */
  readonly maxBodyBytes: number
  /** Time a client has to send a request's headers, and the whole request; slower ones get 408. */
  readonly httpHeadersTimeoutMs: number
  readonly httpRequestTimeoutMs: number
  /** Open connections one client address may hold (a proxy in front counts as one address). */
  readonly maxConnectionsPerIp: number
  /** Period of the scheduled workers' cycle, in milliseconds. */
  readonly cronIntervalMs: number
  readonly actionsTimeoutMs: number
  readonly actionsMaxResponseBytes: number
  readonly actionsAllowPrivateNetworks: boolean
  readonly webhookRetryBaseMs: number
  readonly webhookMaxAttempts: number
  readonly openAiBaseUrl: Option.Option<string>
  readonly openAiApiKey: Option.Option<Redacted.Redacted>
  readonly openAiModel: string
  readonly openAiEmbeddingModel: string
}

const PositiveInt = Schema.FiniteFromString.check(Schema.isInt(), Schema.isGreaterThan(0))

const positiveInt = (name: string, fallback: number) =>
  Config.schema(PositiveInt, name).pipe(Config.withDefault(fallback))

/** `TRUST_PROXY`: `false` (0), `true` (1), or how many proxies of yours stand in front, up to 10. */
const trustedProxies = Config.schema(
  Schema.String.check(
    Schema.isPattern(/^\s*(true|false|[0-9]|10)\s*$/i, {
      message: "must be true, false or the number of your proxies in front of the service (0 to 10)"
    })
  ),
  "TRUST_PROXY"
).pipe(
  Config.map((value) => {
    const text = value.trim().toLowerCase()
    return text === "true" ? 1 : text === "false" ? 0 : Number(text)
  }),
  Config.withDefault(0)
)

const list = (name: string) =>
  Config.String(name).pipe(
    Config.map((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0)),
    Config.withDefault<ReadonlyArray<string>>([])
  )

/** Connections per process to PostgreSQL unless `DATABASE_POOL_SIZE` says otherwise. */
export const defaultDatabasePoolSize = 20

export const serverConfig = Config.all({
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  // 0 asks the OS for a free port (tests).
  port: Config.schema(
    Schema.FiniteFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 65535 })),
    "PORT"
  )
    .pipe(Config.withDefault(8080)),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  databasePoolSize: positiveInt("DATABASE_POOL_SIZE", defaultDatabasePoolSize),
  dataDir: Config.NonEmptyString("DATA_DIR").pipe(Config.withDefault("./.data")),
  redisUrl: Config.option(Config.Redacted("REDIS_URL")),
  redisPrefix: Config.String("REDIS_PREFIX").pipe(Config.withDefault("agent-platform:")),
  sessionSecret: Config.option(Config.Redacted("SESSION_SECRET")),
  encryptionKey: Config.option(Config.Redacted("ENCRYPTION_KEY")),
  role: Config.Literals(["all", "api", "jobs"], "ROLE").pipe(Config.withDefault("all" as const)),
  logLevel: Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  logFormat: Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(
    Config.withDefault(process.stdout.isTTY ? "pretty" as const : "json" as const)
  ),
  bootstrapTenant: Config.NonEmptyString("BOOTSTRAP_TENANT").pipe(Config.withDefault("default")),
  bootstrapAdminEmail: Config.NonEmptyString("BOOTSTRAP_ADMIN_EMAIL").pipe(Config.withDefault("admin@example.com")),
  bootstrapAdminPassword: Config.option(Config.Redacted("BOOTSTRAP_ADMIN_PASSWORD")),
  corsOrigins: list("CORS_ORIGINS"),
  trustedProxies,
  maxBodyBytes: positiveInt("MAX_BODY_BYTES", 1024 * 1024),
  httpHeadersTimeoutMs: positiveInt("HTTP_HEADERS_TIMEOUT_MS", 10_000),
  httpRequestTimeoutMs: positiveInt("HTTP_REQUEST_TIMEOUT_MS", 120_000),
  maxConnectionsPerIp: positiveInt("MAX_CONNECTIONS_PER_IP", 128),
  cronIntervalMs: positiveInt("CRON_INTERVAL_MS", 30_000),
  actionsTimeoutMs: positiveInt("ACTIONS_TIMEOUT_MS", 10_000),
  actionsMaxResponseBytes: positiveInt("ACTIONS_MAX_RESPONSE_BYTES", 1024 * 1024),
  actionsAllowPrivateNetworks: Config.Boolean("ACTIONS_ALLOW_PRIVATE_NETWORKS").pipe(Config.withDefault(false)),
  webhookRetryBaseMs: positiveInt("WEBHOOK_RETRY_BASE_MS", 30_000),
  webhookMaxAttempts: positiveInt("WEBHOOK_MAX_ATTEMPTS", 8),
  openAiBaseUrl: Config.option(Config.String("OPENAI_BASE_URL")),
  openAiApiKey: Config.option(Config.Redacted("OPENAI_API_KEY")),
  openAiModel: Config.String("OPENAI_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
  openAiEmbeddingModel: Config.String("OPENAI_EMBEDDING_MODEL").pipe(Config.withDefault("text-embedding-3-small"))
})

/**
 * Rules that span several variables, checked before anything starts; the
 * line to print when one is broken.
 */
export const configProblem = (config: ServerConfigShape): string | undefined => {
  const url = (name: string, value: string, schemes: ReadonlyArray<string>) =>
    URL.canParse(value) && schemes.includes(new URL(value).protocol)
      ? undefined
      : `Invalid configuration: ${name} must be a URL starting with ${schemes.map((s) => `${s}//`).join(" or ")}`
  const problems = [
    Option.isSome(config.databaseUrl)
      ? url("DATABASE_URL", Redacted.value(config.databaseUrl.value), ["postgres:", "postgresql:"])
      : undefined,
    Option.isSome(config.redisUrl)
      ? url("REDIS_URL", Redacted.value(config.redisUrl.value), ["redis:", "rediss:"])
      : undefined,
    Option.isSome(config.openAiBaseUrl)
      ? url("OPENAI_BASE_URL", config.openAiBaseUrl.value, ["https:", "http:"])
      : undefined,
    ...config.corsOrigins.map((origin) =>
      origin === "*" || (URL.canParse(origin) && new URL(origin).origin === origin.replace(/\/$/, ""))
        ? undefined
        : `Invalid configuration: CORS_ORIGINS holds ${
          JSON.stringify(origin)
        }: list origins such as https://app.example.com (scheme, host and port only), separated by commas, or *`
    ),
    /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(config.bootstrapAdminEmail)
      ? undefined
      : `Invalid configuration: BOOTSTRAP_ADMIN_EMAIL must be an email address (the first administrator signs in with it), not ${
        JSON.stringify(config.bootstrapAdminEmail)
      }`,
    Option.isSome(config.encryptionKey) && Redacted.value(config.encryptionKey.value).length < 32
      ? "Invalid configuration: ENCRYPTION_KEY must be at least 32 characters (e.g. `openssl rand -hex 32`)"
      : undefined
  ]
  const first = problems.find((problem) => problem !== undefined)
  if (first !== undefined) return first
  if (Option.isSome(config.databaseUrl) && Option.isNone(config.sessionSecret)) {
    return "Invalid configuration: SESSION_SECRET is required when DATABASE_URL is set (every replica must sign sessions with the same secret; e.g. `openssl rand -hex 32`)"
  }
  if (Option.isSome(config.sessionSecret) && Redacted.value(config.sessionSecret.value).length < 32) {
    return "Invalid configuration: SESSION_SECRET must be at least 32 characters (e.g. `openssl rand -hex 32`)"
  }
  return undefined
}

/** The configuration of this process. */
export class ServerConfig extends Context.Service<ServerConfig, ServerConfigShape>()(
  "@agent-platform/server/Platform/ServerConfig"
) {
  /** Reads the configuration from the current ConfigProvider (the environment by default). */
  static readonly layer = Layer.effect(ServerConfig, serverConfig)
}
