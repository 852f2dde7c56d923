/**
 * Password hashing with argon2id (OWASP parameters: 19 MiB, 2 iterations).
 * Hashing runs on libuv's thread pool, off the event loop.
 */
import * as argon2 from "@node-rs/argon2"
import { Context, Effect, Layer } from "effect"

export class Passwords extends Context.Service<Passwords, {
  readonly hash: (password: string) => Effect.Effect<string>
  /** Constant-time verification; false for a malformed hash. */
  readonly verify: (hash: string, password: string) => Effect.Effect<boolean>
  /**
   * Spends the time of a verification without a user, so an unknown email
   * answers as slowly as a wrong password.
   */
  readonly verifyDummy: (password: string) => Effect.Effect<void>
}>()("@agent-platform/server/Identity/Passwords") {
  static readonly layer = Layer.effect(
    Passwords,
    Effect.gen(function*() {
      const options = { memoryCost: 19_456, timeCost: 2, parallelism: 1 }
      const hash = (password: string) => Effect.promise(() => argon2.hash(password, options))
      const verify = (hashed: string, password: string) =>
        Effect.promise(() => argon2.verify(hashed, password).catch(() => false))
      const dummy = yield* hash(crypto.randomUUID())
      return Passwords.of({
        hash,
        verify,
        verifyDummy: (password) => Effect.asVoid(verify(dummy, password))
      })
    })
  )
}

/** A random password for generated credentials: 20 characters from a CSPRNG, every class present. */
export const generatePassword = (): string => {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  const body = Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("")
  return `${body}Aa7!`
}
