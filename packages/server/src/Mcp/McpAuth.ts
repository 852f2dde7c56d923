/**
 * Who may use `/mcp`, and how often: an API key (`Authorization: Bearer`)
 * with the scope `actions:execute` or `actions`, counted against the same
 * per-key limits as the `/v1` interface. A `tools/call` is an execution: it
 * counts in the `execute` class, the very bucket of `POST
 * /v1/actions/{id}/execute` (60/min across both); every other request counts
 * in the `data` class (300/min). The key's own `rate_limit_rpm` applies too.
 */
import type { KeyPrincipal, RateLimitClass, Scope } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import { ApiKeys } from "../Keys/ApiKeys.ts"
import { type RateLimitOutcome, RateLimits } from "../Platform/RateLimits.ts"

/** The scopes that open `/mcp`, either being enough. */
export const mcpScopes: ReadonlyArray<Scope> = ["actions", "actions:execute"]

export type Authentication =
  | { readonly _tag: "Authenticated"; readonly key: KeyPrincipal }
  | { readonly _tag: "Refused"; readonly status: 401 | 403; readonly message: string }

const bearerOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim())
  return match === null ? undefined : match[1].trim()
}

/** The limit class of a JSON-RPC method. */
export const limitClassOf = (method: string): RateLimitClass => (method === "tools/call" ? "execute" : "data")

export class McpAuth extends Context.Service<McpAuth, {
  /** The key of an `Authorization` header, or why it is refused. */
  readonly authenticate: (authorization: string | undefined) => Effect.Effect<Authentication>
  /** Counts one JSON-RPC request of the key. */
  readonly consume: (key: KeyPrincipal, method: string) => Effect.Effect<RateLimitOutcome>
}>()("@agent-platform/server/Mcp/McpAuth") {
  static readonly layer = Layer.effect(
    McpAuth,
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const limits = yield* RateLimits

      const authenticate = Effect.fnUntraced(function*(authorization: string | undefined) {
        const bearer = bearerOf(authorization)
        if (bearer === undefined) {
          return {
            _tag: "Refused",
            status: 401,
            message: "Missing API key: send Authorization: Bearer sk_live_..."
          } as const
        }
        const key = yield* keys.verify(bearer).pipe(Effect.orDie)
        if (key._tag === "KeyRefused") {
          return { _tag: "Refused", status: key.answer === "Unauthenticated" ? 401 : 403, message: key.error } as const
        }
        if (!mcpScopes.some((scope) => key.scopes.includes(scope))) {
          return {
            _tag: "Refused",
            status: 403,
            message: `MCP needs the scope \`actions\` or \`actions:execute\`; the key has ${
              key.scopes.length === 0 ? "none" : key.scopes.map((s) => `\`${s}\``).join(", ")
            }. Create a key with it.`
          } as const
        }
        return { _tag: "Authenticated", key } as const
      })

      const consume = (key: KeyPrincipal, method: string) =>
        limits.consume({ keyId: key.keyId, keyRpm: key.rateLimitRpm, limitClass: limitClassOf(method) })

      return McpAuth.of({ authenticate, consume })
    })
  )
}
