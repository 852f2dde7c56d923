/**
 * The SSRF guard of outbound calls (actions and webhooks): only http(s), and
 * never to loopback, link-local, private (RFC 1918, ULA), CGNAT, unspecified,
 * multicast, reserved or cloud-metadata addresses — unless
 * `ACTIONS_ALLOW_PRIVATE_NETWORKS=true` (tests, local demos).
 *
 * The guard judges the resolved addresses, not the host name: `check` resolves
 * the host and refuses it when any of its addresses is refused, and `lookup`
 * (given to the sockets of the outbound HTTP client) resolves again at connect
 * time, checks every address and hands the socket only checked ones, so a DNS
 * answer that changes between the check and the connection (rebinding) cannot
 * reach an internal address.
 */
import { Context, Effect, Layer, Option, Result, Schema } from "effect"
import * as IpNetwork from "effect/net/IpNetwork"
import * as NetAddress from "effect/net/NetAddress"
import * as Dns from "node:dns"
import type { LookupFunction } from "node:net"
import { isIP } from "node:net"
import { ServerConfig } from "../Platform/Config.ts"

/** An outbound call the guard will not make; `message` says why and what to change. */
export class OutboundRefused extends Schema.TaggedError<OutboundRefused>()("OutboundRefused", {
  message: Schema.String
}) {}

/** The error code a refused connect-time lookup carries, so the HTTP layer can tell it from a network failure. */
export const refusedLookupCode = "E_OUTBOUND_REFUSED"

const metadataAddresses: ReadonlyArray<readonly [string, string]> = [
  ["169.254.169.254", "a cloud metadata address"],
  ["fd00:ec2::254", "a cloud metadata address"]
]

const refusedNetworks: ReadonlyArray<readonly [IpNetwork.IpNetwork, string]> = ([
  ["0.0.0.0/8", "an unspecified address"],
  ["10.0.0.0/8", "a private address"],
  ["100.64.0.0/10", "a carrier-grade NAT address"],
  ["127.0.0.0/8", "a loopback address"],
  ["169.254.0.0/16", "a link-local address"],
  ["172.16.0.0/12", "a private address"],
  ["192.0.0.0/24", "a reserved address"],
  ["192.168.0.0/16", "a private address"],
  ["198.18.0.0/15", "a reserved address"],
  ["224.0.0.0/4", "a multicast address"],
  ["240.0.0.0/4", "a reserved address"],
  ["::/128", "an unspecified address"],
  ["::1/128", "a loopback address"],
  ["100::/64", "a reserved address"],
  ["fc00::/7", "a private (unique local) address"],
  ["fe80::/10", "a link-local address"],
  ["fec0::/10", "a private (site-local) address"],
  ["ff00::/8", "a multicast address"]
] as const).map(([cidr, label]) => [IpNetwork.fromStringUnsafe(cidr), label] as const)

const nat64 = IpNetwork.fromStringUnsafe("64:ff9b::/96")

/** The IPv4 address an IPv6 address carries (IPv4-mapped or NAT64), if any. */
const embeddedIpv4 = (address: NetAddress.Ipv6Address): Option.Option<NetAddress.Ipv4Address> => {
  if (NetAddress.isIpv4Mapped(address)) return NetAddress.fromIpv4Mapped(address)
  if (IpNetwork.contains(nat64, address)) {
    const octets = NetAddress.ipv6ToOctets(address).slice(12)
    return Option.some(NetAddress.ipv4FromBytesUnsafe(Uint8Array.from(octets)))
  }
  return Option.none()
}

/**
 * Why an address may not be called (e.g. "a loopback address"), or
 * `undefined` for a public one. Unparsable input is refused.
 */
export const refusalReason = (address: string): string | undefined => {
  // Drop an IPv6 zone (`fe80::1%eth0`) and URL brackets.
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  const parsed = NetAddress.ipFromString(bare)
  if (Result.isFailure(parsed)) return "not a valid IP address"
  const ip = parsed.success
  if (NetAddress.isIpv6Address(ip)) {
    const v4 = embeddedIpv4(ip)
    if (Option.isSome(v4)) return refusalReason(NetAddress.formatIp(v4.value))
  }
  const formatted = NetAddress.formatIp(ip)
  const metadata = metadataAddresses.find(([known]) => known === formatted)
  if (metadata !== undefined) return metadata[1]
  return refusedNetworks.find(([network]) => IpNetwork.contains(network, ip))?.[1]
}

const allowHint = "set ACTIONS_ALLOW_PRIVATE_NETWORKS=true to allow internal targets"

const refusedAddresses = (host: string, addresses: ReadonlyArray<string>): string | undefined => {
  for (const address of addresses) {
    const reason = refusalReason(address)
    if (reason !== undefined) {
      const resolved = address === host ? "" : ` resolves to ${address}, which`
      return `outbound call refused: ${host}${resolved} is ${reason}; ${allowHint}`
    }
  }
  return undefined
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "")

const resolveAll = (host: string) =>
  Effect.callback<ReadonlyArray<string>, OutboundRefused>((resume) => {
    Dns.lookup(host, { all: true, verbatim: true }, (error, addresses) => {
      resume(
        error === null
          ? Effect.succeed(addresses.map((a) => a.address))
          : Effect.fail(new OutboundRefused({ message: `cannot resolve ${host}: ${error.code ?? error.message}` }))
      )
    })
  })

/** A connect-time `lookup` that refuses hosts with a refused address. */
const makeGuardedLookup = (allowPrivateNetworks: boolean): LookupFunction => (hostname, options, callback) => {
  Dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    const refused = allowPrivateNetworks ? undefined : refusedAddresses(hostname, addresses.map((a) => a.address))
    if (refused !== undefined) {
      return callback(Object.assign(new Error(refused), { code: refusedLookupCode }), [])
    }
    if (options.all === true) return callback(null, addresses)
    const first = addresses[0]
    if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), [])
    callback(null, first.address, first.family)
  })
}

export class OutboundGuard extends Context.Service<OutboundGuard, {
  readonly allowPrivateNetworks: boolean
  /** Refuses a URL that is not http(s) or whose host is, or resolves to, a refused address. */
  readonly check: (url: URL) => Effect.Effect<void, OutboundRefused>
  /** The `lookup` for outbound sockets: the same check, at connect time. */
  readonly lookup: LookupFunction
}>()("@agent-platform/server/Actions/OutboundGuard") {
  static readonly make = (allowPrivateNetworks: boolean) => {
    const check = (url: URL): Effect.Effect<void, OutboundRefused> => {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return Effect.fail(new OutboundRefused({ message: `outbound call refused: only http and https URLs are allowed, not ${url.protocol}` }))
      }
      if (allowPrivateNetworks) return Effect.void
      const host = hostOf(url)
      const addresses = isIP(host) === 0 ? resolveAll(host) : Effect.succeed([host])
      return Effect.flatMap(addresses, (resolved) => {
        const refused = refusedAddresses(host, resolved)
        return refused === undefined ? Effect.void : Effect.fail(new OutboundRefused({ message: refused }))
      })
    }
    return OutboundGuard.of({ allowPrivateNetworks, check, lookup: makeGuardedLookup(allowPrivateNetworks) })
  }

  /** Reads `ACTIONS_ALLOW_PRIVATE_NETWORKS`. */
  static readonly layer = Layer.effect(
    OutboundGuard,
    Effect.gen(function*() {
      const config = yield* ServerConfig
      return OutboundGuard.make(config.actionsAllowPrivateNetworks)
    })
  )
}
