/**
 * The client's IP address: the socket's peer, or with `TRUST_PROXY` the
 * left-most address of `X-Forwarded-For` (as set by your own proxy).
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
  if (config.trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]
    if (forwarded !== undefined && forwarded.length > 0) return parseIp(forwarded.split(",")[0])
  }
  return Option.match(request.remoteAddress, { onNone: () => undefined, onSome: parseIp })
})
