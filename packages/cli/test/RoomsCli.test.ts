/**
 * `agent-platform rooms list|show|close|seed-defaults`: the real CLI as a
 * child process, signed in with its own session file, against rooms made
 * through the SDK.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { join } from "node:path"
import { memberPassword, person, roomSpace, setRoomsFlag } from "../../server/test/RoomsFixtures.ts"
import {
  adminEmail,
  adminPassword,
  layer as testServer,
  serverSuite,
  TestServer
} from "../../server/test/TestServer.ts"
import { run, temporaryDirectory } from "./CliProcess.ts"

/** The CLI signed in as `email`, with its own session file. */
const cliAs = (email: string, password: string) =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory
    const env = { AGENT_PLATFORM_CONFIG: join(dir, "config.json") }
    const { baseUrl } = yield* TestServer
    const login = yield* run(["--url", baseUrl, "login", "--email", email, "--password", password], env)
    assert.strictEqual(login.code, 0, login.stderr)
    return (...args: ReadonlyArray<string>) => run(args, env)
  })

layer(testServer(), serverSuite)("agent-platform rooms", (it) => {
  describe("rooms seed-defaults", () => {
    it.effect("prints the blueprint and agent ids, the same on every run; --json gives the API's body", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { admin, space, seeded } = yield* roomSpace()
        const cli = yield* cliAs(adminEmail, adminPassword)
        const text = yield* cli("rooms", "seed-defaults", "--space", space.id)
        assert.strictEqual(text.code, 0, text.stderr)
        assert.match(text.stdout, new RegExp(`persistent blueprint\\s+${seeded.blueprint_ids.persistent}`))
        assert.match(text.stdout, new RegExp(`decisions agent\\s+${seeded.agent_ids.decisions}`))
        const json = yield* cli("--json", "rooms", "seed-defaults", "--space", space.id)
        assert.deepStrictEqual(JSON.parse(json.stdout), seeded)
        assert.strictEqual(
          (yield* admin.api.blueprints.list()).blueprints.filter((b) => b.space_id === space.id).length,
          2
        )
        const unknown = yield* cli("rooms", "seed-defaults", "--space", crypto.randomUUID())
        assert.strictEqual(unknown.code, 1)
        assert.match(unknown.stderr, /^error: space .* not found/)
      }))

    it.effect("names the space by code or id, as every --space does; an unknown code points at `spaces list`", () =>
      Effect.gen(function*() {
        yield* setRoomsFlag(true)
        const { space, seeded } = yield* roomSpace()
        const cli = yield* cliAs(adminEmail, adminPassword)
        const byCode = yield* cli("--json", "rooms", "seed-defaults", "--space", space.code)
        assert.strictEqual(byCode.code, 0, byCode.stderr)
        assert.deepStrictEqual(JSON.parse(byCode.stdout), seeded)
        const unknown = yield* cli("rooms", "seed-defaults", "--space", "no-such-space")
        assert.strictEqual(unknown.code, 1)
        assert.strictEqual(
          unknown.stderr,
          "error: space no-such-space not found: `agent-platform spaces list` shows them\n"
        )
        const help = yield* cli("rooms", "seed-defaults", "--help")
        assert.match(help.stdout, /--space string +The space to seed \(its code or id\)/)
      }))
  })

  describe("rooms list, show, close", () => {
    /** Ana's room with one message, and the CLI signed in as her. */
    const anasRoom = Effect.gen(function*() {
      yield* setRoomsFlag(true)
      const { seeded } = yield* roomSpace()
      const ana = yield* person("Ana")
      const { room } = yield* ana.client.api.rooms.create({
        payload: {
          external_ref: `cli-${crypto.randomUUID()}`,
          blueprint_id: seeded.blueprint_ids.ephemeral,
          title: "Checkout outage"
        }
      })
      yield* ana.client.api.roomChats.append({
        params: { id: room.chat_id },
        payload: { content: "We decided to roll back the release." }
      })
      const cli = yield* cliAs(ana.email, memberPassword)
      return { seeded, ana, room, cli }
    })

    it.effect("lists the rooms a user takes part in and shows one with its participants", () =>
      Effect.gen(function*() {
        const { seeded, ana, room, cli } = yield* anasRoom
        const listed = yield* cli("rooms", "list")
        assert.strictEqual(listed.code, 0, listed.stderr)
        const [header, row] = listed.stdout.trim().split("\n")
        assert.match(header, /^ID\s+REF\s+TITLE\s+STATUS\s+LIFECYCLE\s+PEOPLE\s+AGENTS\s+CREATED$/)
        assert.match(
          row,
          new RegExp(`^${room.id}\\s+${room.external_ref}\\s+Checkout outage\\s+open\\s+ephemeral\\s+1\\s+2\\s+`)
        )
        const json = yield* cli("--json", "rooms", "list", "--status", "open")
        assert.deepStrictEqual(JSON.parse(json.stdout).rooms.map((r: { id: string }) => r.id), [room.id])
        const shown = yield* cli("rooms", "show", room.id)
        assert.strictEqual(shown.code, 0, shown.stderr)
        assert.include(shown.stdout, "Participants (3):")
        assert.include(shown.stdout, `Ana (person ${ana.id})`)
        assert.include(shown.stdout, `Summary (agent ${seeded.agent_ids.summary}, always on)`)
      }))

    it.effect("closes a room and prints its minutes; closing again exits 1 with the server's message", () =>
      Effect.gen(function*() {
        const { room, cli } = yield* anasRoom
        const closed = yield* cli("rooms", "close", room.id)
        assert.strictEqual(closed.code, 0, closed.stderr)
        assert.include(closed.stdout, `Closed room ${room.id}.`)
        assert.include(closed.stdout, "Minutes:")
        assert.include(closed.stdout, "- We decided to roll back the release.")
        const again = yield* cli("rooms", "close", room.id)
        assert.strictEqual(again.code, 1)
        assert.match(again.stderr, /^error: Room .* is closed/)
      }))

    it.effect("someone who does not take part sees no rooms and cannot show one", () =>
      Effect.gen(function*() {
        const { room } = yield* anasRoom
        const stranger = yield* person("Stranger")
        const cli = yield* cliAs(stranger.email, memberPassword)
        const refused = yield* cli("rooms", "show", room.id)
        assert.strictEqual(refused.code, 1)
        assert.match(refused.stderr, /^error: You do not take part in this room/)
        assert.strictEqual((yield* cli("rooms", "list")).stdout.trim(), "No rooms.")
      }))
  })
})
