/**
 * The SSRF guard (issue #8, item 6): every special-purpose range of the IANA
 * IPv4 and IPv6 registries is refused, IPv6 forms carrying an IPv4 address
 * are judged by it, and so is every address of this host's own interfaces.
 * Nothing here connects anywhere: the guard decides before any socket opens.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Os from "node:os"
import { OutboundGuard, refusalReason } from "../src/Actions/OutboundGuard.ts"
import { adminClient, layer as testServer, messageOf, serverSuite } from "./TestServer.ts"

const noOwnAddresses: ReadonlySet<string> = new Set()

const refusedV4 = [
  "0.0.0.0",
  "0.1.2.3",
  "10.1.2.3",
  "100.64.0.1",
  "127.0.0.1",
  "169.254.169.254",
  "172.16.0.1",
  "192.0.0.9",
  "192.0.2.1",
  "192.31.196.1",
  "192.52.193.1",
  "192.88.99.1",
  "192.168.1.1",
  "192.175.48.1",
  "198.18.0.1",
  "198.51.100.7",
  "203.0.113.9",
  "224.0.0.1",
  "240.0.0.1",
  "255.255.255.255"
]

const refusedV6 = [
  "::",
  "::1",
  "::ffff:127.0.0.1",
  "::ffff:0:10.0.0.1",
  "64:ff9b::a00:1",
  "64:ff9b:1::c0a8:101",
  "100::1",
  "2001::1",
  "2001:2::1",
  "2001:3::1",
  "2001:4:112::1",
  "2001:10::1",
  "2001:20::1",
  "2001:30::1",
  "2001:db8::1",
  "2002:a00:1::1",
  "2002:c0a8:101::1",
  "2002:7f00:1::1",
  "2620:4f:8000::1",
  "3fff::1",
  "5f00::1",
  "fc00::1",
  "fd00:ec2::254",
  "fe80::1",
  "fec0::1",
  "ff02::1"
]

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "172.32.0.1",
  "2606:4700:4700::1111",
  // NAT64 and 6to4 forms of a public IPv4 address are public.
  "64:ff9b::808:808",
  "2002:808:808::1"
]

describe("refusalReason", () => {
  it("refuses every special-purpose IPv4 range, documentation ranges included", () => {
    for (const address of refusedV4) assert.isDefined(refusalReason(address, noOwnAddresses), address)
  })

  it("refuses every special-purpose IPv6 range, and NAT64 or 6to4 addresses that carry a refused IPv4", () => {
    for (const address of refusedV6) assert.isDefined(refusalReason(address, noOwnAddresses), address)
    assert.match(refusalReason("2002:a00:1::1", noOwnAddresses)!, /carrying 10\.0\.0\.1, a private address/)
    assert.match(refusalReason("64:ff9b::7f00:1", noOwnAddresses)!, /carrying 127\.0\.0\.1, a loopback address/)
  })

  it("lets public addresses through, also in their NAT64 and 6to4 forms", () => {
    for (const address of allowed) assert.isUndefined(refusalReason(address, noOwnAddresses), address)
  })

  it("refuses an address of this host's own interfaces, even a public one", () => {
    assert.strictEqual(refusalReason("8.8.8.8", new Set(["8.8.8.8"])), "an address of this host")
    for (const entries of Object.values(Os.networkInterfaces())) {
      for (const entry of entries ?? []) assert.isDefined(refusalReason(entry.address), entry.address)
    }
  })

  it("refuses what is not an IP address", () => {
    assert.strictEqual(refusalReason("example.com", noOwnAddresses), "not a valid IP address")
    assert.strictEqual(refusalReason("999.1.1.1", noOwnAddresses), "not a valid IP address")
  })
})

describe("OutboundGuard.check", () => {
  const guard = OutboundGuard.make(false)
  it.effect("refuses URLs whose host is a refused address, before any connection", () =>
    Effect.gen(function*() {
      for (
        const url of [
          "http://192.0.2.1/",
          "https://[::]/x",
          "http://[2002:c0a8:101::1]:8080/",
          "http://203.0.113.5/hook"
        ]
      ) {
        const refused = yield* guard.check(new URL(url)).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "OutboundRefused", url)
        assert.match(refused.message, /ACTIONS_ALLOW_PRIVATE_NETWORKS/)
      }
      for (const entries of Object.values(Os.networkInterfaces())) {
        for (const entry of entries ?? []) {
          const host = entry.family === "IPv6" ? `[${entry.address.replace(/%.*$/, "")}]` : entry.address
          const refused = yield* guard.check(new URL(`http://${host}:8080/`)).pipe(Effect.flip)
          assert.strictEqual(refused._tag, "OutboundRefused", entry.address)
        }
      }
    }))
})

layer(testServer({ ACTIONS_ALLOW_PRIVATE_NETWORKS: "false" }), serverSuite)("webhook subscriptions", (it) => {
  it.effect("a URL in a documentation range is refused with 400 when the subscription is created", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient
      for (const url of ["https://192.0.2.10/hook", "https://[2001:db8::10]/hook", "https://[64:ff9b::c0a8:1]/hook"]) {
        const refused = yield* admin.api.webhooks.create({ payload: { name: "internal", url } }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "InvalidRequest", url)
        assert.match(messageOf(refused), /outbound call refused/, url)
      }
    }))
})
