/**
 * An in-process server for HTTP-level tests, on its own database: a copy of
 * the migrated template (embedded PGlite by default, or a fresh database on
 * the real PostgreSQL of `TEST_DATABASE_URL`), with Redis under a private key
 * prefix when `TEST_REDIS_URL` is set. Everything is dropped afterwards.
 */
import type { Scope } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import { ConfigProvider, Context, Effect, Layer, Redacted } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpServer from "effect/http/HttpServer"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import { ServerConfig } from "../src/Platform/Config.ts"
import { layerEmbedded, layerPostgres } from "../src/Platform/Database.ts"
import { type DatabaseLayer, makeApp } from "../src/Server.ts"
import { onServer } from "./globalSetup.ts"
import { deleteKeysOnClose } from "./RedisKeys.ts"

export const adminEmail = "admin@example.com"
export const adminPassword = "Bootstrap-Passw0rd!"

/**
 * A new database on the PostgreSQL server of `url`, copied from the run's
 * migrated template and dropped when the scope closes; its URL.
 */
export const postgresCopy = (url: string) =>
  Effect.gen(function*() {
    const name = `ap_test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
    yield* Effect.acquireRelease(
      Effect.promise(() =>
        onServer(
          url,
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${inject("postgresTemplate")}"`)
          )
        )
      ),
      () =>
        Effect.promise(() =>
          onServer(
            url,
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
          )
        )
    )
    const databaseUrl = new URL(url)
    databaseUrl.pathname = `/${name}`
    return databaseUrl.toString()
  })

/** The test database: a copy of the migrated template. */
export const testDatabase = Layer.unwrap(Effect.gen(function*() {
  const url = process.env.TEST_DATABASE_URL
  if (url === undefined || url === "") {
    const template = new Blob([readFileSync(inject("embeddedTemplate"))])
    return layerEmbedded({ dataDir: undefined, loadDataDir: template })
  }
  return layerPostgres(Redacted.make(yield* postgresCopy(url)))
}))

export interface TestServerShape {
  readonly baseUrl: string
  /** A typed client; pass `apiKey` or `sessionToken` to authenticate. */
  readonly client: (options?: Omit<Sdk.ClientOptions, "baseUrl">) => Effect.Effect<Sdk.Connected>
  /** A client signed in as the bootstrap superadmin. */
  readonly admin: Effect.Effect<Sdk.Connected>
}

export class TestServer extends Context.Service<TestServer, TestServerShape>()("test/TestServer") {}

/**
 * The server under test; `env` overrides configuration variables (e.g.
 * `{ CRON_INTERVAL_MS: "200" }`); `redis: false` keeps the key-value store in
 * PostgreSQL even when the run has Redis; `database` replaces the server's own
 * copy of the template (e.g. to run two replicas on one database);
 * `redisPrefix` names its Redis keys' prefix.
 */
export const layer = (
  env: Record<string, string> = {},
  options: {
    readonly redis?: boolean
    readonly database?: DatabaseLayer
    /** The server's Redis key prefix (default a new one), deleted with everything under it when the server stops. */
    readonly redisPrefix?: string
  } = {}
) => {
  const redisUrl = options.redis === false ? undefined : process.env.TEST_REDIS_URL
  const redisPrefix = options.redisPrefix ?? `ap-test:${crypto.randomUUID()}:`
  const config = (dataDir: string) =>
    ConfigProvider.fromUnknown({
      // What the service keeps in DATA_DIR besides an embedded database (generated VAPID keys) goes to a folder of
      // this server's, removed with it, not to the checkout's `.data`.
      DATA_DIR: dataDir,
      HOST: "127.0.0.1",
      PORT: "0",
      SESSION_SECRET: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"),
      BOOTSTRAP_ADMIN_EMAIL: adminEmail,
      BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
      ACTIONS_ALLOW_PRIVATE_NETWORKS: "true",
      CRON_INTERVAL_MS: "1000",
      LOG_LEVEL: "Warn",
      ...(redisUrl === undefined || redisUrl === "" ? {} : { REDIS_URL: redisUrl, REDIS_PREFIX: redisPrefix }),
      ...env
    })
  const server = Layer.effect(
    TestServer,
    Effect.gen(function*() {
      const baseUrl = yield* HttpServer.addressFormattedWith((address) => Effect.succeed(address))
      const client = (options: Omit<Sdk.ClientOptions, "baseUrl"> = {}) =>
        Sdk.make({ baseUrl, ...options }).pipe(Effect.provide(FetchHttpClient.layer))
      const admin = Effect.gen(function*() {
        const connected = yield* client()
        yield* connected.api.auth.login({ payload: { email: adminEmail, password: adminPassword } }).pipe(Effect.orDie)
        return connected
      })
      return TestServer.of({ baseUrl, client, admin })
    })
  )
  // Acquired before the service is built, so released after it stops: the Redis keys are deleted once no
  // worker can write another (a cleanup inside the service's layer ran while its workers still ticked).
  return Layer.unwrap(Effect.gen(function*() {
    const dataDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "agent-platform-test-data-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    if (redisUrl !== undefined && redisUrl !== "") yield* deleteKeysOnClose(redisUrl, redisPrefix)
    return server.pipe(
      Layer.provideMerge(makeApp(options.database ?? testDatabase)),
      Layer.provideMerge(ServerConfig.layer),
      Layer.provide(ConfigProvider.layer(config(dataDir)))
    )
  }))
}

/** Options for `layer(testServer(...), serverSuite)`: real clock in the server, generous start-up time. */
export const serverSuite = { excludeTestServices: true, timeout: "180 seconds" } as const

/** Raw HTTP against the server, for what a typed client must not be used for (cookies, headers, bad input). */
export interface HttpResult {
  readonly status: number
  readonly headers: globalThis.Headers
  readonly body: any
}

export const http = (path: string, init: RequestInit = {}): Effect.Effect<HttpResult, never, TestServer> =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* Effect.promise(() => fetch(`${server.baseUrl}${path}`, init))
    const text = yield* Effect.promise(() => response.text())
    let body: any = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body }
  })

/** A JSON request init. */
export const json = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body)
})

/** Signs in through the SDK and returns the signed-in client. */
export const signIn = (email: string, password: string): Effect.Effect<Sdk.Connected, never, TestServer> =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const client = yield* server.client()
    yield* client.api.auth.login({ payload: { email, password } })
    return client
  }).pipe(Effect.orDie)

/** Creates an API key as the bootstrap admin (or `as`) and returns its secret. */
export const createKey = (
  scopes: ReadonlyArray<Scope>,
  options: { readonly rate_limit_rpm?: number; readonly space_id?: string; readonly as?: Sdk.Connected } = {}
): Effect.Effect<{ readonly id: string; readonly key: string; readonly prefix: string }, never, TestServer> =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const admin = options.as ?? (yield* server.admin)
    const created = yield* admin.api.keys.create({
      payload: {
        name: `test key ${scopes.join(",")}`,
        scopes,
        ...(options.rate_limit_rpm === undefined ? {} : { rate_limit_rpm: options.rate_limit_rpm }),
        ...(options.space_id === undefined ? {} : { space_id: options.space_id })
      }
    })
    return created
  }).pipe(Effect.orDie)

/** A second tenant with its own administrator, signed in. */
export const secondTenant = (
  name = `Tenant ${crypto.randomUUID().slice(0, 8)}`
): Effect.Effect<
  {
    readonly tenant: { readonly id: string; readonly name: string }
    readonly email: string
    readonly password: string
    readonly client: Sdk.Connected
  },
  never,
  TestServer
> =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const admin = yield* server.admin
    const email = `admin-${crypto.randomUUID().slice(0, 8)}@other.example.com`
    const password = "Other-Tenant-Passw0rd"
    const tenant = yield* admin.api.admin.createTenant({
      payload: { name, admin_email: email, admin_password: password }
    })
    const client = yield* signIn(email, password)
    return { tenant, email, password, client }
  }).pipe(Effect.orDie)

/** The `error` message of a failed SDK call (its typed error), or a description of a transport failure. */
export const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "error" in error && typeof error.error === "string"
    ? error.error
    : String(error)

/** The bootstrap superadmin, signed in. */
export const adminClient: Effect.Effect<Sdk.Connected, never, TestServer> = Effect.gen(function*() {
  const server = yield* TestServer
  return yield* server.admin
})

/** A client authenticated with an API key. */
export const keyClient = (key: string): Effect.Effect<Sdk.Connected, never, TestServer> =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.client({ apiKey: key })
  })

/** The Authorization header of an API key, for raw HTTP calls. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** The Cookie header of a signed-in client, for raw HTTP calls. */
export const sessionCookie = (
  client: { readonly sessionToken: Effect.Effect<string | undefined> }
): Effect.Effect<string> => Effect.map(client.sessionToken, (token) => `Service-Token=${token}`)
