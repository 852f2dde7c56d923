/** Fixtures of the rooms tests: the flag, spaces with agents, people, rooms, and raw room-chat calls. */
import type * as Sdk from "@agent-platform/sdk"
import { Effect } from "effect"
import { spaceWithAgent } from "./Catalog.ts"
import { adminClient, http, json, sessionCookie, signIn, TestServer } from "./TestServer.ts"

/** Turns the tenant's `feature_war_rooms` flag on (or off) as the bootstrap admin or `as`. */
export const setRoomsFlag = (on: boolean, as?: Sdk.Connected) =>
  Effect.gen(function*() {
    const admin = as ?? (yield* adminClient)
    yield* admin.api.admin.updateFlags({ payload: { feature_war_rooms: on } })
  }).pipe(Effect.orDie)

export const setPushFlag = (on: boolean, as?: Sdk.Connected) =>
  Effect.gen(function*() {
    const admin = as ?? (yield* adminClient)
    yield* admin.api.admin.updateFlags({ payload: { push_notifications: on } })
  }).pipe(Effect.orDie)

/** A new space with a primary `Support` agent, and its seeded defaults. */
export const roomSpace = (as?: Sdk.Connected) =>
  Effect.gen(function*() {
    const admin = as ?? (yield* adminClient)
    const { space, agent: support } = yield* spaceWithAgent(
      { name: "Support", summary: "Customer support: orders, returns and refunds" },
      admin
    )
    const seeded = yield* admin.api.blueprints.seedDefaults({ payload: { space_id: space.id } })
    return { admin, space, support, seeded }
  }).pipe(Effect.orDie)

export interface Person {
  readonly id: string
  readonly email: string
  readonly nombre: string
  readonly client: Sdk.Connected
}

export const memberPassword = "Room-Member-Passw0rd"

/** A new signed-in person of the bootstrap tenant (or of `as`'s). */
export const person = (nombre = "Member", role: "r_user" | "r_admin" = "r_user", as?: Sdk.Connected) =>
  Effect.gen(function*() {
    const admin = as ?? (yield* adminClient)
    const email = `${nombre.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${crypto.randomUUID().slice(0, 8)}@example.com`
    const password = memberPassword
    const user = yield* admin.api.admin.createUser({ payload: { email, nombre, password, role_id: role } })
    const client = yield* signIn(email, password)
    return { id: user.id, email, nombre, client } satisfies Person
  }).pipe(Effect.orDie)

/** Finds or creates a room with a fresh ref (or `ref`) from `blueprintId`, as `client`. */
export const newRoom = (client: Sdk.Connected, blueprintId: string, ref = `ref-${crypto.randomUUID()}`) =>
  Effect.map(
    client.api.rooms.create({ payload: { external_ref: ref, blueprint_id: blueprintId } }),
    (result) => result.room
  ).pipe(
    Effect.orDie
  )

/**
 * The common room of the chat tests: the rooms flag on, a new space with its
 * seeded blueprints, and Ana and Bo (signed in) in an ephemeral room Ana opened.
 */
export const anaAndBoInARoom = Effect.gen(function*() {
  yield* setRoomsFlag(true)
  const { seeded } = yield* roomSpace()
  const ana = yield* person("Ana")
  const bo = yield* person("Bo")
  const room = yield* newRoom(ana.client, seeded.blueprint_ids.ephemeral)
  yield* ana.client.api.rooms.addParticipant({ params: { id: room.id }, payload: { user_id: bo.id } }).pipe(
    Effect.orDie
  )
  return { seeded, ana, bo, room }
})

/** A raw request with `client`'s session cookie. */
export const asUser = (client: Sdk.Connected, path: string, init: RequestInit = {}) =>
  Effect.gen(function*() {
    const cookie = yield* sessionCookie(client)
    return yield* http(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), cookie } })
  })

export const appendRaw = (client: Sdk.Connected, chatId: string, body: unknown) =>
  asUser(client, `/api/chats/${chatId}/messages/append`, json("POST", body))

/** Polls `effect` until `done` holds of its result, up to `seconds`. */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean, seconds = 30) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    for (;;) {
      const value = yield* effect
      if (done(value)) return value
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`condition not met within ${seconds} s: ${JSON.stringify(value)}`))
      }
      yield* Effect.sleep("100 millis")
    }
  })

/** The WebSocket URL of a room chat on the test server. */
export const socketUrl = (chatId: string, query = "") =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return `${server.baseUrl.replace(/^http/, "ws")}/api/chats/${chatId}/ws${query}`
  })
