/**
 * Encryption of secrets at rest (tenant secrets referenced by action headers,
 * TOTP secrets): AES-256-GCM with a random 96-bit nonce per value. The key is
 * derived with HKDF from `ENCRYPTION_KEY`, or from the session secret when
 * that is unset.
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { SessionSecret } from "../Identity/SessionSecret.ts"
import { ServerConfig } from "./Config.ts"

export class DecryptionFailed extends Schema.TaggedError<DecryptionFailed>()("DecryptionFailed", {
  message: Schema.String
}) {}

const version = "v1"

export class Encryption extends Context.Service<Encryption, {
  readonly encrypt: (plaintext: string) => string
  readonly decrypt: (ciphertext: string) => Effect.Effect<string, DecryptionFailed>
}>()("@agent-platform/server/Platform/Encryption") {
  static readonly layer = Layer.effect(
    Encryption,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      const sessionSecret = yield* SessionSecret
      const material = Option.match(config.encryptionKey, {
        onNone: () => Redacted.value(sessionSecret),
        onSome: (key) => new TextEncoder().encode(Redacted.value(key))
      })
      const key = Buffer.from(hkdfSync("sha256", material, "agent-platform", "encryption-at-rest", 32))
      const encrypt = (plaintext: string) => {
        const nonce = randomBytes(12)
        const cipher = createCipheriv("aes-256-gcm", key, nonce)
        const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
        return [version, nonce.toString("base64"), body.toString("base64"), cipher.getAuthTag().toString("base64")]
          .join(".")
      }
      const decrypt = (ciphertext: string) =>
        Effect.try({
          try: () => {
            const [v, nonce, body, tag] = ciphertext.split(".")
            if (v !== version || nonce === undefined || body === undefined || tag === undefined) {
              throw new Error("unknown format")
            }
            const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"))
            decipher.setAuthTag(Buffer.from(tag, "base64"))
            return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8")
          },
          catch: () =>
            new DecryptionFailed({
              message:
                "cannot decrypt a stored secret: was ENCRYPTION_KEY (or SESSION_SECRET, when it is unset) changed? Set the secret again."
            })
        })
      return Encryption.of({ encrypt, decrypt })
    })
  )
}
