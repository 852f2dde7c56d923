/**
 * `rooms list|show|close|seed-defaults`: work rooms as a signed-in user sees
 * them (administrators see every room; `seed-defaults` is theirs).
 */
import type { Rooms } from "@agent-platform/domain"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Lookup from "../Lookup.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

const roomId = Argument.String("id").pipe(Argument.withDescription("The room's id, as `rooms list` shows it"))

const participantLabel = (participant: Rooms.Participant) =>
  "user_id" in participant
    ? `${participant.nombre} (person ${participant.user_id})`
    : `${participant.name} (agent ${participant.agent_id}${participant.always_on ? ", always on" : ""})`

/** The room's fields, participants and minutes, for people. */
const printRoom = (room: Rooms.Room) =>
  Effect.gen(function*() {
    yield* Output.fields([
      ["id", room.id],
      ["ref", room.external_ref],
      ["title", Output.orDash(room.title)],
      ["status", room.status],
      ["lifecycle", room.lifecycle],
      ["blueprint", Output.orDash(room.blueprint_id)],
      ["space", room.space_id],
      ["chat", room.chat_id],
      ["created", Output.minute(room.created_at)],
      ["closed", Output.minute(room.closed_at)]
    ])
    yield* Console.log("")
    yield* Console.log(`Participants (${room.participants.length}):`)
    for (const participant of room.participants) {
      yield* Console.log(`  ${Output.printable(participantLabel(participant))}`)
    }
    if (room.minutes !== null) {
      yield* Console.log("")
      yield* Console.log("Minutes:")
      yield* Console.log(`  ${Output.printableText(room.minutes.summary)}`)
      if (room.minutes.decisions.length === 0) yield* Console.log("  No decisions recorded.")
      for (const decision of room.minutes.decisions) {
        yield* Console.log(
          `  - ${Output.printable(decision.decision)}${
            decision.owner === null ? "" : ` (owner: ${Output.printable(decision.owner)})`
          }`
        )
      }
    }
  })

const list = Command.make(
  "list",
  {
    status: Flag.Literals("status", ["open", "closed"] as const).pipe(
      Flag.withDescription("Only open or closed rooms"),
      Flag.optional
    ),
    blueprint: Flag.String("blueprint").pipe(
      Flag.withDescription("Only rooms made from this blueprint (its id)"),
      Flag.optional
    ),
    limit: Flag.Int("limit").pipe(Flag.withDescription("Rooms per page, 1 to 100 (default 50)"), Flag.optional),
    cursor: Flag.String("cursor").pipe(
      Flag.withDescription("The next page: the cursor a previous listing printed"),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ status, blueprint, limit, cursor }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const page = yield* client.api.rooms.list({
        query: {
          ...(Option.isSome(status) ? { status: status.value } : {}),
          ...(Option.isSome(blueprint) ? { blueprint_id: blueprint.value } : {}),
          ...(Option.isSome(limit) ? { limit: limit.value } : {}),
          ...(Option.isSome(cursor) ? { cursor: cursor.value } : {})
        }
      })
      if (json) return yield* Output.json(page)
      if (page.rooms.length === 0) return yield* Console.log("No rooms.")
      yield* Output.table<Rooms.Room>([
        ["id", (room) => room.id],
        ["ref", (room) => room.external_ref],
        ["title", (room) => Output.orDash(room.title)],
        ["status", (room) => room.status],
        ["lifecycle", (room) => room.lifecycle],
        ["people", (room) => String(room.participants.filter((p) => "user_id" in p).length)],
        ["agents", (room) => String(room.participants.filter((p) => "agent_id" in p).length)],
        ["created", (room) => Output.minute(room.created_at)]
      ], page.rooms)
      if (page.next_cursor !== null) {
        yield* Console.log(`\nMore: agent-platform rooms list --cursor ${page.next_cursor}`)
      }
    }))
  })
).pipe(Command.withDescription("List rooms (administrators see all; others the rooms they take part in)"))

const show = Command.make(
  "show",
  { id: roomId },
  Effect.fnUntraced(function*({ id }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const room = yield* client.api.rooms.get({ params: { id } })
      if (json) return yield* Output.json(room)
      yield* printRoom(room)
    }))
  })
).pipe(Command.withDescription("Show a room: its participants and, once closed, its minutes"))

const close = Command.make(
  "close",
  { id: roomId },
  Effect.fnUntraced(function*({ id }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const room = yield* client.api.rooms.close({ params: { id } })
      if (json) return yield* Output.json(room)
      yield* Console.log(`Closed room ${room.id}.`)
      yield* Console.log("")
      yield* printRoom(room)
    }))
  })
).pipe(Command.withDescription("Close a room: its always-on agents write the minutes"))

const seedDefaults = Command.make(
  "seed-defaults",
  { space: Flag.String("space").pipe(Flag.withDescription("The space to seed (its code or id)")) },
  Effect.fnUntraced(function*({ space }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const { id: spaceId } = yield* Lookup.space(client, space)
      const seeded = yield* client.api.blueprints.seedDefaults({ payload: { space_id: spaceId } })
      if (json) return yield* Output.json(seeded)
      yield* Output.fields([
        ["persistent blueprint", seeded.blueprint_ids.persistent],
        ["ephemeral blueprint", seeded.blueprint_ids.ephemeral],
        ["summary agent", seeded.agent_ids.summary],
        ["decisions agent", seeded.agent_ids.decisions]
      ])
    }))
  })
).pipe(
  Command.withDescription(
    "Seed a space's default blueprints and minute-taking agents (administrators; safe to repeat)"
  ),
  Command.withExamples([{
    command: "agent-platform rooms seed-defaults --space support",
    description: "Make the space ready for rooms: the same ids come back on every run"
  }])
)

export const rooms = Command.make("rooms").pipe(
  Command.withDescription("List, show and close work rooms; seed a space's default blueprints"),
  Command.withSubcommands([list, show, close, seedDefaults])
)
