/**
 * The key that signs session JWTs. With a real database it must come from
 * `SESSION_SECRET` (every replica needs the same one); in embedded mode a
 * random one is generated on first start and kept in `DATA_DIR/session-secret`.
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { configProblem, ServerConfig } from "../Platform/Config.ts"

export class SessionSecretInvalid extends Schema.TaggedError<SessionSecretInvalid>()("SessionSecretInvalid", {
  message: Schema.String
}) {}

export class SessionSecret extends Context.Service<SessionSecret, Redacted.Redacted<Uint8Array>>()(
  "@agent-platform/server/Identity/SessionSecret"
) {
  static readonly layer = Layer.effect(
    SessionSecret,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const problem = configProblem(config)
      if (problem !== undefined) return yield* new SessionSecretInvalid({ message: problem })
      if (Option.isSome(config.sessionSecret)) {
        return Redacted.make(new TextEncoder().encode(Redacted.value(config.sessionSecret.value)))
      }
      const secret = yield* Effect.try({
        try: () => {
          const file = join(config.dataDir, "session-secret")
          if (existsSync(file)) return readFileSync(file, "utf8").trim()
          mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
          const generated = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")
          writeFileSync(file, generated + "\n", { mode: 0o600 })
          chmodSync(file, 0o600)
          return generated
        },
        catch: (cause) =>
          new SessionSecretInvalid({
            message: `cannot read or create ${config.dataDir}/session-secret: ${String(cause)}`
          })
      })
      return Redacted.make(new TextEncoder().encode(secret))
    })
  )
}
