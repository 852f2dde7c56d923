/** Who is calling a session endpoint, and from where. */
import { CurrentPrincipal, type KeyPrincipal, type UserPrincipal } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as NetAddress from "effect/net/NetAddress"
import { clientIp } from "../Platform/ClientIp.ts"
import type { ClientInfo } from "./SignIn.ts"

// Both run on every request of their interface: one step each, without a generator.

/** The signed-in user; session endpoints only run after SessionAuth provided one. */
export const currentUser: Effect.Effect<UserPrincipal, never, CurrentPrincipal> = Effect.flatMap(
  CurrentPrincipal,
  (principal) =>
    principal._tag === "User"
      ? Effect.succeed(principal)
      : Effect.die(new Error("a session endpoint ran without a session"))
)

/** The calling key; key endpoints only run after ApiKeyAuth provided one. */
export const currentKey: Effect.Effect<KeyPrincipal, never, CurrentPrincipal> = Effect.flatMap(
  CurrentPrincipal,
  (principal) =>
    principal._tag === "Key" ? Effect.succeed(principal) : Effect.die(new Error("a key endpoint ran without a key"))
)

/** The client's address and user agent, for sign-in policies and audit entries. */
export const clientInfo = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const ip = yield* clientIp
  return {
    ip,
    ipText: ip === undefined ? null : NetAddress.formatIp(ip),
    userAgent: request.headers["user-agent"] ?? null
  } satisfies ClientInfo
})
