/**
 * The opening handshake of the room's WebSocket (RFC 6455 §4.2.1), checked
 * before the upgrade: a request that is no WebSocket upgrade, or whose
 * handshake headers the `ws` library would refuse, gets the API's JSON error
 * with its request id instead of an empty 426 or the library's bare HTML 400
 * written to the socket.
 */
import { Errors, RoomsErrors } from "@agent-platform/domain"
import { Effect, Schema } from "effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

/** `Connection` lists `upgrade` (RFC 9110 §7.8: without it, `Upgrade` does not apply). */
const ConnectionUpgrade = Schema.String.check(Schema.isPattern(/(?:^|,)\s*upgrade\s*(?:,|$)/i))

/** `Upgrade: websocket`, in any case. */
const UpgradeWebSocket = Schema.String.check(Schema.isPattern(/^websocket$/i))

/** The base64 encoding of 16 bytes: 22 characters and the padding `==` (RFC 6455 §4.1, as `ws` checks it). */
const SecWebSocketKey = Schema.String.check(Schema.isPattern(/^[+/0-9A-Za-z]{22}==$/))

/** The one version RFC 6455 defines. */
const SecWebSocketVersion = Schema.Literal("13")

const token = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+"

/** Subprotocol names: tokens separated by commas, each once (RFC 6455 §4.1, as `ws` parses them). */
const SecWebSocketProtocol = Schema.String.check(
  Schema.isPattern(new RegExp(`^${token}(?:[ \\t]*,[ \\t]*${token})*$`)),
  Schema.makeFilter((list: string) => {
    const names = list.split(",").map((name) => name.trim())
    return new Set(names).size === names.length ? undefined : "names a subprotocol twice"
  })
)

const isConnectionUpgrade = Schema.is(ConnectionUpgrade)
const isUpgradeWebSocket = Schema.is(UpgradeWebSocket)
const isSecWebSocketKey = Schema.is(SecWebSocketKey)
const isSecWebSocketVersion = Schema.is(SecWebSocketVersion)
const isSecWebSocketProtocol = Schema.is(SecWebSocketProtocol)

/** Adds `headers` to the response of `request`, whatever it turns out to be. */
const answerWith = (request: HttpServerRequest.HttpServerRequest, headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))

/**
 * Succeeds when `request` is a WebSocket handshake the upgrade will accept;
 * else 426 `UpgradeRequired` (with `Upgrade: websocket`) for a request that
 * asks for no WebSocket, or 400 `InvalidRequest` naming the faulty header.
 */
export const requireWebSocketHandshake = Effect.fnUntraced(function*(
  request: HttpServerRequest.HttpServerRequest,
  chatId: string
): Effect.fn.Return<void, RoomsErrors.UpgradeRequired | Errors.InvalidRequest> {
  const headers = request.headers
  if (!isConnectionUpgrade(headers.connection) || !isUpgradeWebSocket(headers.upgrade)) {
    // RFC 9110 §15.5.22: a 426 names the protocol to switch to.
    yield* answerWith(request, { connection: "Upgrade", upgrade: "websocket" })
    return yield* new RoomsErrors.UpgradeRequired({
      error:
        `This endpoint speaks WebSocket only: connect with Upgrade: websocket (and Connection: Upgrade), as a WebSocket client does, or poll GET /api/chats/${chatId}/messages.`
    })
  }
  if (!isSecWebSocketKey(headers["sec-websocket-key"])) {
    return yield* new Errors.InvalidRequest({
      error:
        "Sec-WebSocket-Key header: missing or invalid; it must be the base64 encoding of 16 random bytes (24 characters ending in ==)."
    })
  }
  if (!isSecWebSocketVersion(headers["sec-websocket-version"])) {
    // RFC 6455 §4.4: the refusal lists the versions the server speaks.
    yield* answerWith(request, { "sec-websocket-version": "13" })
    return yield* new Errors.InvalidRequest({
      error: "Sec-WebSocket-Version header: missing or unsupported; this service speaks version 13."
    })
  }
  const protocol = headers["sec-websocket-protocol"]
  if (protocol !== undefined && !isSecWebSocketProtocol(protocol)) {
    return yield* new Errors.InvalidRequest({
      error:
        "Sec-WebSocket-Protocol header: invalid; it must be a comma-separated list of distinct subprotocol names (tokens)."
    })
  }
})
