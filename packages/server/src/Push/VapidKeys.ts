/**
 * The VAPID key pair (RFC 8292) that signs every Web Push: from
 * `VAPID_PUBLIC_KEY`, `VAPID_PRIVATE_KEY` and `VAPID_SUBJECT`; with the
 * embedded database and none configured, generated once with web-push into
 * `DATA_DIR/vapid-keys.json` (mode 0600) on first use and read back after a
 * restart; with PostgreSQL and none configured, generated once into the
 * database (the private key encrypted at rest, so `ENCRYPTION_KEY` or
 * `SESSION_SECRET` must match across replicas, as for every secret), where
 * every replica finds the same pair.
 */
import { Config, ConfigProvider, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import webpush from "web-push"
import { ServerConfig } from "../Platform/Config.ts"
import { DatabaseMode } from "../Platform/Database.ts"
import { Encryption } from "../Platform/Encryption.ts"
import { VapidKeysRepo } from "./VapidKeysRepo.ts"

export interface VapidDetails {
  readonly publicKey: string
  readonly privateKey: Redacted.Redacted<string>
  /** `mailto:` or `https:`: who push services contact about the sender. */
  readonly subject: string
}

/** Web Push cannot be used: no key pair is configured and none may be generated. */
export class VapidUnavailable extends Schema.TaggedError<VapidUnavailable>()("VapidUnavailable", {
  message: Schema.String
}) {}

/** The library's own checks of a key pair and subject; the problem, or undefined. */
export const vapidProblem = (
  details: { readonly publicKey: string; readonly privateKey: string; readonly subject: string }
) => {
  try {
    webpush.getVapidHeaders("https://push.invalid", details.subject, details.publicKey, details.privateKey, "aes128gcm")
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

const invalid = (message: string) => Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message })))

/** `VAPID_*` from the environment: both keys or neither, checked as web-push will use them. */
export const vapidConfig = Config.all({
  publicKey: Config.option(Config.String("VAPID_PUBLIC_KEY")),
  privateKey: Config.option(Config.Redacted("VAPID_PRIVATE_KEY")),
  subject: Config.option(Config.String("VAPID_SUBJECT"))
}).pipe(Config.mapEffect((env) => {
  if (Option.isSome(env.subject) && !/^(mailto:|https:\/\/)\S+$/.test(env.subject.value)) {
    return invalid("VAPID_SUBJECT must be a mailto: address or an https:// URL (push services contact you there)")
  }
  if (Option.isSome(env.publicKey) !== Option.isSome(env.privateKey)) {
    return invalid("set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, or neither")
  }
  if (Option.isSome(env.publicKey) && Option.isSome(env.privateKey)) {
    const problem = vapidProblem({
      publicKey: env.publicKey.value,
      privateKey: Redacted.value(env.privateKey.value),
      subject: Option.getOrElse(env.subject, () => "mailto:admin@example.com")
    })
    if (problem !== undefined) return invalid(`VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY or VAPID_SUBJECT: ${problem}`)
  }
  return Effect.succeed(env)
}))

const KeyFile = Schema.Struct({ publicKey: Schema.String, privateKey: Schema.String })
const decodeKeyFile = Schema.decodeUnknownSync(Schema.fromJsonString(KeyFile))

export const keyFileName = "vapid-keys.json"

/** Reads the key pair in `dataDir`, creating it once when missing (exclusive create: a racing writer's pair wins). */
const fileKeys = (dataDir: string) =>
  Effect.sync(() => {
    const file = join(dataDir, keyFileName)
    try {
      return decodeKeyFile(readFileSync(file, "utf8"))
    } catch (error) {
      if ((error as { code?: string }).code !== "ENOENT") throw error
    }
    mkdirSync(dataDir, { recursive: true })
    const generated = webpush.generateVAPIDKeys()
    try {
      writeFileSync(file, JSON.stringify(generated, null, 2), { mode: 0o600, flag: "wx" })
      return generated
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error
      return decodeKeyFile(readFileSync(file, "utf8"))
    }
  })

export class VapidKeys extends Context.Service<VapidKeys, {
  /** The key pair, generated on first use where allowed. */
  readonly get: Effect.Effect<VapidDetails, VapidUnavailable>
}>()("@agent-platform/server/Push/VapidKeys") {
  static readonly layer = Layer.effect(
    VapidKeys,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const mode = yield* DatabaseMode
      const env = yield* vapidConfig
      const subject = Option.getOrElse(env.subject, () => `mailto:${config.bootstrapAdminEmail}`)
      if (Option.isSome(env.publicKey) && Option.isSome(env.privateKey)) {
        return VapidKeys.of({
          get: Effect.succeed({ publicKey: env.publicKey.value, privateKey: env.privateKey.value, subject })
        })
      }
      const details = (keys: { readonly publicKey: string; readonly privateKey: string }): VapidDetails => ({
        publicKey: keys.publicKey,
        privateKey: Redacted.make(keys.privateKey),
        subject
      })
      if (mode.kind !== "embedded") {
        const encryption = yield* Encryption
        const repo = yield* VapidKeysRepo
        const stored = Effect.gen(function*() {
          const fresh = webpush.generateVAPIDKeys()
          const pair = yield* repo.insertOrGet({
            public_key: fresh.publicKey,
            private_key_encrypted: encryption.encrypt(fresh.privateKey)
          })
          const privateKey = yield* encryption.decrypt(pair.private_key_encrypted)
          return details({ publicKey: pair.public_key, privateKey })
        }).pipe(
          Effect.mapError((error) =>
            new VapidUnavailable({
              message:
                `Web Push keys could not be read (${error.message}): set VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT, or check that ENCRYPTION_KEY (or SESSION_SECRET) is the same on every replica.`
            })
          )
        )
        // Kept once read; a failure is not kept, so the next call tries again. Concurrent first calls
        // may each generate a pair: the database keeps the first, and every caller gets that one.
        let known: VapidDetails | undefined
        return VapidKeys.of({
          get: Effect.suspend(() =>
            known !== undefined
              ? Effect.succeed(known)
              : Effect.tap(stored, (pair) => Effect.sync(() => (known = pair)))
          )
        })
      }
      const generated = yield* Effect.cached(Effect.map(fileKeys(config.dataDir), details).pipe(Effect.orDie))
      return VapidKeys.of({ get: generated })
    })
  ).pipe(Layer.provide(VapidKeysRepo.layer))
}
