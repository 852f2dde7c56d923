/**
 * The client's IP address: the socket's peer, or behind `TRUST_PROXY`
 * proxies the address the outermost of them saw. Each proxy appends its
 * peer's address to `X-Forwarded-For`, so with N proxies of yours in front
 * the client is the N-th address from the right; whatever stands left of it
 * came from the client and is not trusted (a forged `X-Forwarded-For:
 * 10.0.0.5` stays on the left and changes nothing). A chain shorter than N
 * came through fewer proxies: its left-most address is the client.
 */
import { Effect, Option, Result } from "effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as NetAddress from "effect/net/NetAddress"
import { ServerConfig } from "./Config.ts"

/** Parses an address as Node reports it (`::ffff:127.0.0.1` becomes `127.0.0.1`). */
export const parseIp = (raw: string): NetAddress.IpAddress | undefined => {
  const trimmed = raw.trim().replace(/^\[|\]$/g, "")
  const unmapped = trimmed.toLowerCase().startsWith("::ffff:") && trimmed.includes(".") ? trimmed.slice(7) : trimmed
  const result = NetAddress.ipFromString(unmapped)
  return Result.isSuccess(result) ? result.success : undefined
}

/** The current request's client IP, when it can be told. */
export const clientIp: Effect.Effect<
  NetAddress.IpAddress | undefined,
  never,
  HttpServerRequest.HttpServerRequest | ServerConfig
> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* ServerConfig
  if (config.trustedProxies > 0) {
    const forwarded = request.headers["x-forwarded-for"]
    if (forwarded !== undefined && forwarded.length > 0) {
      const chain = forwarded.split(",")
      return parseIp(chain[Math.max(0, chain.length - config.trustedProxies)])
    }
  }
  return Option.match(request.remoteAddress, { onNone: () => undefined, onSome: parseIp })
})
