/**
 * The session file: where `login` keeps `{ url, sessionToken, email }` for the
 * commands that follow — `$AGENT_PLATFORM_CONFIG`, else
 * `$XDG_CONFIG_HOME/agent-platform/config.json`, else
 * `$HOME/.config/agent-platform/config.json` (the OS's home directory when
 * HOME is unset).
 *
 * The token is a bearer credential, so the file is only ever readable by its
 * owner: mode 0600 in a directory created 0700.
 */
import { Config, Effect, FileSystem, Option, Path, Schema } from "effect"
import { homedir } from "node:os"

/** What `login` stores. */
export const StoredSession = Schema.Struct({
  url: Schema.String,
  sessionToken: Schema.String,
  email: Schema.String
})
export type StoredSession = typeof StoredSession.Type

/** The session file cannot be read, parsed or written. */
export class SessionFileError extends Schema.TaggedError<SessionFileError>()("SessionFileError", {
  message: Schema.String
}) {}

/** The path of the session file, from the environment. */
export const location: Effect.Effect<string, never, Path.Path> = Effect.gen(function*() {
  const path = yield* Path.Path
  const explicit = yield* Config.option(Config.String("AGENT_PLATFORM_CONFIG"))
  if (Option.isSome(explicit)) return path.resolve(explicit.value)
  const configHome = yield* Config.option(Config.String("XDG_CONFIG_HOME"))
  const home = yield* Config.option(Config.String("HOME"))
  const base = Option.getOrElse(configHome, () => path.join(Option.getOrElse(home, homedir), ".config"))
  return path.join(base, "agent-platform", "config.json")
}).pipe(Effect.orDie)

const decode = Schema.decodeUnknownEffect(Schema.fromJsonString(StoredSession))

/** The stored session, or none when nobody has signed in (or after `logout`). */
export const read: Effect.Effect<Option.Option<StoredSession>, SessionFileError, FileSystem.FileSystem | Path.Path> =
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* location
    const exists = yield* fs.exists(file)
    if (!exists) return Option.none()
    const text = yield* fs.readFileString(file)
    return Option.some(yield* decode(text))
  }).pipe(
    Effect.catch((cause) =>
      Effect.flatMap(location, (file) =>
        Effect.fail(
          new SessionFileError({
            message: Schema.isSchemaError(cause)
              ? `${file} is not a session file: run \`agent-platform login\` to replace it`
              : `cannot read ${file}: ${cause.message}`
          })
        ))
    )
  )

/** Stores the session, readable by its owner only. */
export const write = (
  session: StoredSession
): Effect.Effect<string, SessionFileError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = yield* location
    yield* fs.makeDirectory(path.dirname(file), { recursive: true, mode: 0o700 })
    // Created 0600 beside the file and renamed over it: the token is never readable by others, not even
    // for a moment, and a file left with wider permissions by something else is replaced, not reused.
    const partial = `${file}.${process.pid}.partial`
    yield* fs.remove(partial, { force: true })
    yield* fs.writeFileString(partial, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600, flag: "wx" })
    yield* fs.rename(partial, file)
    return file
  }).pipe(
    Effect.catchTag("PlatformError", (cause) =>
      Effect.flatMap(location, (file) =>
        Effect.fail(new SessionFileError({ message: `cannot write ${file}: ${cause.message}` }))))
  )

/** Deletes the stored session. */
export const remove: Effect.Effect<void, SessionFileError, FileSystem.FileSystem | Path.Path> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  yield* fs.remove(yield* location, { force: true })
}).pipe(
  Effect.catchTag(
    "PlatformError",
    (cause) =>
      Effect.flatMap(
        location,
        (file) => Effect.fail(new SessionFileError({ message: `cannot delete ${file}: ${cause.message}` }))
      )
  )
)
