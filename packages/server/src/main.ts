/**
 * The service's entry point (`pnpm start` runs its bundle). Reads and checks
 * the configuration, opens the database, migrates, bootstraps, then serves
 * and/or runs the workers until SIGTERM or SIGINT: in-flight requests finish,
 * workers stop after their current step, and the process exits with 0.
 */
// First: keeps nextTick on its fast path (see the module).
import "./Platform/TickShape.ts"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Option, Runtime, Schema } from "effect"
import { createServer } from "node:net"
import { setFlagsFromString } from "node:v8"
import { configProblem, ServerConfig, serverConfig, type ServerConfigShape } from "./Platform/Config.ts"
import { describeSchemaError } from "./Platform/SchemaErrors.ts"
import { AppLive, LoggingLive } from "./Server.ts"
import { bootstrapPasswordProblem } from "./Tenants/Bootstrap.ts"

/**
 * V8 starts a full collection once the old generation has grown by this
 * percentage over what survived the last one. Left to itself, on a machine
 * with memory to spare, V8 lets it grow up to 4×: under sustained load the
 * requests' objects that young collections promote (they are in flight when
 * one runs) took the service's old generation from ~55 MiB live to ~220 MiB
 * before each full collection, and the resident set swung by a quarter
 * (bench:memory prints the breakdown). At 1.5× the swing is ~30 MiB, for full
 * collections five times as often, each mostly concurrent (~12 ms on the main
 * thread at this heap size). A `--heap-growing-percent` given to node wins.
 */
const heapGrowingPercent = 50
if (!process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) {
  setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`)
}

/**
 * V8's allocation-site pretenuring is off. It allocates objects straight in
 * the old generation when their allocation site's objects were seen
 * surviving young collections, and here it misjudged the request path: the
 * sites of per-request objects (effect's exits, continuations and contexts,
 * Node's request and response objects) were pretenured, each request's
 * objects then died in the old generation, and what they referenced in the
 * young one was kept alive through them and promoted as well. Measured under
 * load (`GET /health`, `--trace-gc-nvp`): 1.6 MB promoted per young
 * collection and 3-4 ms each, a full collection every second; with
 * pretenuring off, 2 KB and 0.5 ms. An `--allocation-site-pretenuring` given
 * to node wins.
 */
if (!process.execArgv.some((arg) => /^--(no-)?allocation[-_]site[-_]pretenuring/.test(arg))) {
  setFlagsFromString("--no-allocation-site-pretenuring")
}

/**
 * The reason an error gives, or its cause's: a refused connection often comes
 * as an AggregateError (one per address tried) whose own message is empty.
 */
const reasonOf = (error: unknown): string => {
  const value = error as
    | { readonly message?: string; readonly code?: string; readonly cause?: unknown; readonly errors?: unknown }
    | undefined
  if (typeof value?.message === "string" && value.message !== "") return value.message
  if (Array.isArray(value?.errors) && value.errors.length > 0) return reasonOf(value.errors[0])
  if (value?.cause !== undefined) return reasonOf(value.cause)
  return value?.code ?? "no reason given"
}

/** One line for a start-up failure the user can fix, or undefined for a bug. */
const describeStartupFailure = (cause: Cause.Cause<unknown>): string | undefined => {
  const error = Cause.squash(cause) as
    | { readonly _tag?: string; readonly message?: string; readonly cause?: unknown }
    | undefined
  switch (error?._tag) {
    case "ConfigError":
      return `Invalid configuration: ${
        Schema.isSchemaError(error.cause)
          ? describeSchemaError(error.cause.issue)
          : (error.cause as { readonly message?: string } | undefined)?.message ?? error.message
      }`
    case "SessionSecretInvalid":
    case "DataDirLocked":
    case "BootstrapPasswordRejected":
      return error.message
    case "ServeError":
      return `Cannot listen: ${error.message}`
    case "SqlError":
      return `Cannot reach the database: ${
        reasonOf(error)
      }. Check DATABASE_URL, or unset it to use the embedded database.`
    case "RedisError":
      return `Cannot reach Redis: ${
        reasonOf(error)
      }. Check REDIS_URL, or unset it to keep the key-value store in PostgreSQL.`
    case "MigrationError":
      return `Database migration failed: ${error.message}`
    default:
      return undefined
  }
}

/** Prints the one line and exits 1, or leaves a bug to the runtime's report. */
const exitOnStartupFailure = (cause: Cause.Cause<unknown>) => {
  const line = describeStartupFailure(cause)
  if (line === undefined || Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
  return Effect.sync(() => {
    console.error(line)
    process.exit(1)
  })
}

/** The address as a URL authority: `127.0.0.1:8080`, `[::1]:8080`. */
const authority = (config: Pick<ServerConfigShape, "host" | "port">) =>
  `${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`

/**
 * Why the service could not listen on HOST:PORT, found by opening and closing
 * the port before the database is opened and the first tenant created: a busy
 * port must not leave a half-made service behind.
 */
const listenProblem = (config: ServerConfigShape): Effect.Effect<string | undefined> =>
  config.role === "jobs" || config.port === 0
    ? Effect.succeed(undefined)
    : Effect.callback<string | undefined>((resume) => {
      const probe = createServer()
      probe.once("error", (error: NodeJS.ErrnoException) => {
        switch (error.code) {
          case "EADDRINUSE":
            return resume(Effect.succeed(
              `Cannot listen on ${
                authority(config)
              }: the port is in use by another process (another \`pnpm start\`?). Stop it, or set PORT to a free port.`
            ))
          case "EACCES":
            return resume(
              Effect.succeed(`Cannot listen on ${authority(config)}: permission denied. Set PORT to 1024 or above.`)
            )
          case "EADDRNOTAVAIL":
          case "ENOTFOUND":
            return resume(
              Effect.succeed(`Cannot listen on ${authority(config)}: HOST is not an address of this machine.`)
            )
          default:
            return resume(Effect.succeed(`Cannot listen on ${authority(config)}: ${error.message}`))
        }
      })
      probe.listen(
        { host: config.host, port: config.port, exclusive: true },
        () => probe.close(() => resume(Effect.succeed(undefined)))
      )
    })

const program = Effect.gen(function*() {
  const config = yield* serverConfig
  const problem = configProblem(config) ?? bootstrapPasswordProblem(config) ?? (yield* listenProblem(config))
  if (problem !== undefined) {
    return yield* Effect.sync(() => {
      console.error(problem)
      process.exit(1)
    })
  }
  const serve = Effect.gen(function*() {
    if (config.role !== "jobs") {
      const base = `http://${authority(config)}`
      yield* Effect.logInfo(`listening on ${base}: API reference ${base}/docs, contract ${base}/openapi.json`)
    }
    yield* Effect.logInfo(
      `role ${config.role}; database ${
        Option.isSome(config.databaseUrl) ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite in ${config.dataDir}`
      }; key-value store ${Option.isSome(config.redisUrl) ? "Redis (REDIS_URL)" : "PostgreSQL"}`
    )
    return yield* Effect.never
  })
  return yield* serve.pipe(
    Effect.provide(Layer.merge(AppLive, LoggingLive).pipe(Layer.provide(Layer.succeed(ServerConfig, config))))
  )
}).pipe(Effect.catchCause(exitOnStartupFailure))

/** A shutdown asked for by SIGTERM or SIGINT is a clean exit (0), not a failure. */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

NodeRuntime.runMain(program, { teardown })
