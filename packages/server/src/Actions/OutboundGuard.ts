/**
 * The SSRF guard of outbound calls (actions and webhook deliveries, which both
 * go through OutboundHttp): only http(s), and never to an address of a
 * special-purpose range of the IANA IPv4 and IPv6 registries (loopback,
 * private, link-local, CGNAT, unspecified `0.0.0.0/8` and `::`, multicast,
 * broadcast, documentation, benchmarking, reserved, AS112, AMT, ORCHID,
 * segment routing, ...), nor to any address of this host's own network
 * interfaces — unless `ACTIONS_ALLOW_PRIVATE_NETWORKS=true` (tests, local
 * demos). The ranges are `ipaddr.js`'s range names, a maintained library,
 * not a list kept here. IPv6 forms that carry an IPv4 address (IPv4-mapped,
 * IPv4-translated, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4
 * `2002::/16`) are judged by that IPv4 address; Teredo is refused.
 *
 * The guard judges the resolved addresses, not the host name: `check`
 * resolves the host and refuses it when any of its addresses is refused, and
 * `lookup` (given to the sockets of the outbound HTTP client) resolves again
 * at connect time, checks every address and hands the socket only checked
 * ones, so a DNS answer that changes between the check and the connection
 * (rebinding) cannot reach an internal address.
 */
import { Context, Effect, Layer, Schema } from "effect"
import ipaddr from "ipaddr.js"
import * as Dns from "node:dns"
import type { LookupFunction } from "node:net"
import { isIP } from "node:net"
import * as Os from "node:os"
import { ServerConfig } from "../Platform/Config.ts"

/**
 * Whether an absolute URL names its host as written (`https://host/...`).
 * The WHATWG parser repairs `http:///x` and `https:x` into `http://x/` and
 * `https://x/`: a destination a user did not type, so outbound URLs with no
 * host between `//` and the path are refused instead.
 */
export const namesHost = (raw: string): boolean => {
  const written = /^[a-z][a-z\d+.-]*:\/\/([^/?#\\]*)/i.exec(raw.trim())
  if (written === null) return false
  const authority = written[1].slice(written[1].lastIndexOf("@") + 1)
  const host = authority.startsWith("[") ? authority : authority.replace(/:\d*$/, "")
  return host.length > 0
}

/** An outbound call the guard will not make; `message` says why and what to change. */
export class OutboundRefused extends Schema.TaggedError<OutboundRefused>()("OutboundRefused", {
  message: Schema.String
}) {}

/** The error code a refused connect-time lookup carries, so the HTTP layer can tell it from a network failure. */
export const refusedLookupCode = "E_OUTBOUND_REFUSED"

/** IPv6 ranges whose addresses carry an IPv4 address, judged by it (ipaddr.js range names). */
const carriesIpv4 = new Set(["ipv4Mapped", "rfc6145", "rfc6052", "6to4"])

/** The IPv4 address an IPv6 address of a `carriesIpv4` range carries. */
const embeddedIpv4 = (address: ipaddr.IPv6, range: string): ipaddr.IPv4 => {
  const bytes = address.toByteArray()
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 carries AA.BB.CC.DD; the others carry it in their last 32 bits.
  const octets = range === "6to4" ? bytes.slice(2, 6) : bytes.slice(12, 16)
  return new ipaddr.IPv4(octets)
}

/** This host's own addresses (every interface), normalized: a call to one would reach this host itself. */
const ownAddresses = (): ReadonlySet<string> => {
  const own = new Set<string>()
  for (const entries of Object.values(Os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      const bare = entry.address.replace(/%.*$/, "")
      if (ipaddr.isValid(bare)) own.add(ipaddr.process(bare).toNormalizedString())
    }
  }
  return own
}

/** Words for the commonest range names (the names themselves are ipaddr.js's), for refusal messages. */
const rangeWords: Record<string, string> = {
  loopback: "loopback",
  private: "private",
  carrierGradeNat: "carrier-grade NAT",
  linkLocal: "link-local (cloud metadata lives here)",
  uniqueLocal: "unique local (private)",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
  reserved: "reserved or documentation"
}

const describeRange = (range: string) => `a ${rangeWords[range] ?? "special-purpose"} address (IANA range ${range})`

/**
 * Why an address may not be called (e.g. "a special-purpose address
 * (loopback)"), or `undefined` for a public one. Unparsable input is refused.
 */
export const refusalReason = (address: string, own: ReadonlySet<string> = ownAddresses()): string | undefined => {
  // Drop an IPv6 zone (`fe80::1%eth0`) and URL brackets.
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  if (!ipaddr.isValid(bare) || isIP(bare) === 0) return "not a valid IP address"
  const parsed = ipaddr.parse(bare)
  return rangeRefusal(parsed, own) ?? (own.has(parsed.toNormalizedString()) ? "an address of this host" : undefined)
}

/** The refusal of a special-purpose range (judging an embedded IPv4 by itself), or undefined for a unicast address. */
const rangeRefusal = (parsed: ipaddr.IPv4 | ipaddr.IPv6, own: ReadonlySet<string>): string | undefined => {
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6
    const range = v6.range()
    if (carriesIpv4.has(range)) {
      const v4 = embeddedIpv4(v6, range)
      const inner = refusalReason(v4.toString(), own)
      return inner === undefined ? undefined : `${describeRange(range)} carrying ${v4.toString()}, ${inner}`
    }
    return range === "unicast" ? undefined : describeRange(range)
  }
  const range = (parsed as ipaddr.IPv4).range()
  return range === "unicast" ? undefined : describeRange(range)
}

const allowHint = "set ACTIONS_ALLOW_PRIVATE_NETWORKS=true to allow internal targets"

const refusedAddresses = (host: string, addresses: ReadonlyArray<string>): string | undefined => {
  const own = ownAddresses()
  for (const address of addresses) {
    const reason = refusalReason(address, own)
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
    if (first === undefined) {
      return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), [])
    }
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
        return Effect.fail(
          new OutboundRefused({
            message: `outbound call refused: only http and https URLs are allowed, not ${url.protocol}`
          })
        )
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
