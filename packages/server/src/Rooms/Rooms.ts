/**
 * Work rooms (spec: "Room and related", rooms endpoints, the Room rows of
 * "States and transitions"): find-or-create by `external_ref`, participants,
 * invitations, closing with minutes.
 *
 * Who may do what, decided here:
 * - read a room: its participants and administrators;
 * - add participants, close: its participants and administrators;
 * - invite, list invitable users, append, poll, the WebSocket: participants only;
 * - use a blueprint's space (create, find): everyone but a Space Admin, who
 *   may use their assigned spaces only;
 * - list: administrators see every room, others the rooms they take part in.
 *
 * Creation, participants, invitations and closing go into the tenant's
 * `audit_logs` chain in the transaction that makes them (closing: the one
 * that stores the minutes).
 *
 * A closed room always gets its minutes (RoomMinutes.ts: the close is
 * uninterruptible from its commit on, and the jobs role writes the minutes
 * of a close a stopped process left without them).
 */
import {
  type Blueprints as BlueprintSchemas,
  Errors,
  isAdmin,
  type Rooms as RoomSchemas,
  RoomsErrors,
  type UserPrincipal
} from "@agent-platform/domain"
import { Config, Context, Effect, Layer, Option, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { Blueprints } from "../Blueprints/Blueprints.ts"
import { Inbox } from "../Inbox/Inbox.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { isUuid } from "../Platform/Ids.ts"
import { PushQueue } from "../Push/PushQueue.ts"
import { notSpaceAdminOf, SpaceAdmins } from "../SpaceAdmin/SpaceAdmins.ts"
import { UsersRepo } from "../Users/UsersRepo.ts"
import { minutesLeaseSeconds, RoomMinutes } from "./RoomMinutes.ts"
import { type ParticipantRow, type RoomRow, RoomsRepo } from "./RoomsRepo.ts"

const defaultPageSize = 50

const toParticipant = (row: ParticipantRow): RoomSchemas.Participant =>
  row.user_id !== null
    ? { user_id: row.user_id, nombre: row.name, joined_at: row.joined_at.toISOString() }
    : { agent_id: row.agent_id!, name: row.name, always_on: row.always_on, joined_at: row.joined_at.toISOString() }

export const toRoom = (row: RoomRow, participants: ReadonlyArray<ParticipantRow>): RoomSchemas.Room => ({
  id: row.id,
  external_ref: row.external_ref,
  title: row.title,
  blueprint_id: row.blueprint_id,
  space_id: row.space_id,
  lifecycle: row.lifecycle,
  status: row.status,
  room_mode: "chat",
  chat_id: row.chat_id,
  created_at: row.created_at.toISOString(),
  closed_at: row.closed_at === null ? null : row.closed_at.toISOString(),
  participants: participants.filter((p) => p.room_id === row.id).map(toParticipant),
  minutes: row.status === "closed" && row.minutes !== null ? row.minutes as RoomSchemas.Minutes : null
})

export const roomNotFound = (id: string) => new Errors.NotFound({ error: `room ${id} not found` })

export const notParticipant = () =>
  new RoomsErrors.NotParticipant({ error: "You do not take part in this room: ask a participant to invite you." })

export const roomClosed = (room: { readonly id: string; readonly lifecycle: string }) =>
  new RoomsErrors.RoomClosed({
    error: room.lifecycle === "persistent"
      ? `Room ${room.id} is closed: POST /api/rooms with its external_ref reopens it.`
      : `Room ${room.id} is closed: POST /api/rooms with its external_ref starts a new room.`
  })

/** Where invitations link to: `APP_BASE_URL`, else the URL the service answers on. */
export const appBaseUrl = Config.option(Config.schema(
  Schema.String.check(
    Schema.makeFilter((value: string) =>
      URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol)
        ? undefined
        : "must be the URL people open the app at, starting with https:// or http://"
    )
  ),
  "APP_BASE_URL"
))

type CreateOutcome = { readonly created: boolean; readonly room: RoomSchemas.Room }

export class Rooms extends Context.Service<Rooms, {
  readonly create: (
    user: UserPrincipal,
    input: typeof RoomSchemas.CreateRoom.Type
  ) => Effect.Effect<CreateOutcome, Errors.InvalidRequest | Errors.NotFound | RoomsErrors.SpaceNotAccessible>
  readonly list: (
    user: UserPrincipal,
    query: {
      readonly blueprint_id?: string | undefined
      readonly status?: "open" | "closed" | undefined
      readonly limit?: number | undefined
      readonly cursor?: string | undefined
    }
  ) => Effect.Effect<typeof RoomSchemas.RoomList.Type, Errors.InvalidRequest>
  readonly get: (
    user: UserPrincipal,
    id: string
  ) => Effect.Effect<RoomSchemas.Room, Errors.NotFound | RoomsErrors.NotParticipant>
  readonly addParticipant: (
    user: UserPrincipal,
    id: string,
    input: typeof RoomSchemas.AddParticipant.Type
  ) => Effect.Effect<
    { readonly added: boolean; readonly participant: RoomSchemas.Participant },
    Errors.InvalidRequest | Errors.NotFound | RoomsErrors.NotParticipant | RoomsErrors.RoomClosed
  >
  readonly invite: (
    user: UserPrincipal,
    id: string,
    input: typeof RoomSchemas.InviteRequest.Type,
    ownUrl: string
  ) => Effect.Effect<
    typeof RoomSchemas.InviteResult.Type,
    Errors.InvalidRequest | Errors.NotFound | RoomsErrors.NotParticipant | RoomsErrors.RoomClosed
  >
  readonly invitableUsers: (
    user: UserPrincipal,
    id: string,
    query: string | undefined
  ) => Effect.Effect<ReadonlyArray<typeof RoomSchemas.InvitableUser.Type>, Errors.NotFound | RoomsErrors.NotParticipant>
  readonly close: (
    user: UserPrincipal,
    id: string
  ) => Effect.Effect<RoomSchemas.Room, Errors.NotFound | RoomsErrors.NotParticipant | RoomsErrors.RoomClosed>
}>()("@agent-platform/server/Rooms/Rooms") {
  static readonly layer = Layer.effect(
    Rooms,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* RoomsRepo
      const blueprints = yield* Blueprints
      const spaceAdmins = yield* SpaceAdmins
      const users = yield* UsersRepo
      const audit = yield* AuditLog
      const inbox = yield* Inbox
      const push = yield* PushQueue
      const roomMinutes = yield* RoomMinutes
      const configuredBaseUrl = yield* appBaseUrl

      const audited = (user: UserPrincipal, event: string, roomId: string, data: Record<string, unknown>) =>
        audit.append("audit_logs", {
          tenantId: user.tenantId,
          event,
          actor: `user:${user.userId}`,
          target: `room:${roomId}`,
          data
        })

      const withParticipants = (row: RoomRow) =>
        Effect.map(Effect.orDie(repo.participants([row.id])), (p) => toRoom(row, p))

      const load = Effect.fnUntraced(function*(user: UserPrincipal, id: string) {
        const row = isUuid(id) ? yield* Effect.orDie(repo.find(user.tenantId, id)) : undefined
        if (row === undefined) return yield* roomNotFound(id)
        return row
      })

      /** In a transaction that adds to the room: 409 when it closed since it was read (it stays open until commit). */
      const stillOpen = (room: RoomRow) =>
        Effect.flatMap(
          repo.lockOpen(room.tenant_id, room.id),
          (open) => (open ? Effect.void : Effect.fail(roomClosed(room)))
        )

      const takesPart = (user: UserPrincipal, room: RoomRow) => Effect.orDie(repo.isParticipant(room.id, user.userId))

      /** Participants, and administrators when `admins` says so; else 403. */
      const requireParticipant = Effect.fnUntraced(function*(user: UserPrincipal, room: RoomRow, admins: boolean) {
        if (admins && isAdmin(user.roleId)) return
        if (!(yield* takesPart(user, room))) return yield* notParticipant()
      })

      const mayUseSpace = Effect.fnUntraced(function*(user: UserPrincipal, spaceId: string) {
        if (user.roleId !== "r_space_admin") return
        const spaces = yield* Effect.orDie(spaceAdmins.spacesOf(user.tenantId, user.userId))
        if (!spaces.includes(spaceId)) {
          return yield* new RoomsErrors.SpaceNotAccessible({
            error: notSpaceAdminOf(spaceId, spaces, "its blueprints are not yours to open rooms with")
          })
        }
      })

      const chooseBlueprint = Effect.fnUntraced(function*(user: UserPrincipal, blueprintId: string | null | undefined) {
        if (blueprintId !== undefined && blueprintId !== null) {
          const blueprint = yield* blueprints.find(user.tenantId, blueprintId)
          if (blueprint === undefined) {
            return yield* new Errors.NotFound({ error: `blueprint ${blueprintId} not found` })
          }
          return blueprint
        }
        const fallback = yield* blueprints.defaultBlueprint(user.tenantId)
        if (fallback === undefined) {
          return yield* new Errors.InvalidRequest({
            error:
              "blueprint_id is required: this tenant has no default blueprint yet (an administrator can make one with POST /api/room-blueprints/seed-defaults)"
          })
        }
        return fallback
      })

      /** The ref's open or persistent room, reopened if needed, with the caller in it; undefined if there is none. */
      const findLive = Effect.fnUntraced(function*(user: UserPrincipal, ref: string) {
        const live = yield* Effect.orDie(repo.findLiveByRef(user.tenantId, ref))
        if (live === undefined) return undefined
        yield* mayUseSpace(user, live.space_id)
        // Closed, its minutes still to come (being written by the close, or left by a stopped process): the closed
        // period's minutes are written first, here if no one else has stored them yet, and the room reopens after.
        if (live.status === "closed" && live.minutes === null && live.minutes_due_at !== null) {
          yield* roomMinutes.record(live, live.closed_by)
        }
        const settled = yield* Effect.gen(function*() {
          let room: RoomRow | undefined = live
          if (live.status === "closed") {
            room = yield* repo.reopen(user.tenantId, live.id)
            // Reopened by a concurrent call meanwhile (or closed again, its minutes due): read it again.
            if (room === undefined) return undefined
            yield* audited(user, "room.reopened", room.id, { external_ref: ref })
          }
          const joined = yield* repo.addUser({
            tenantId: user.tenantId,
            roomId: room.id,
            userId: user.userId,
            addedBy: user.userId
          })
          if (joined.added) {
            yield* audited(user, "room.participant_added", room.id, { user_id: user.userId, via: "find_or_create" })
          }
          return room
        }).pipe(sql.withTransaction, Effect.orDie)
        return settled === undefined ? undefined : { room: settled, reopened: live.status === "closed" }
      })

      const insertRoom = (
        user: UserPrincipal,
        input: typeof RoomSchemas.CreateRoom.Type,
        blueprint: BlueprintSchemas.Blueprint
      ) =>
        Effect.gen(function*() {
          const room = yield* repo.insert({
            tenantId: user.tenantId,
            spaceId: blueprint.space_id,
            blueprintId: blueprint.id,
            externalRef: input.external_ref,
            title: input.title ?? null,
            lifecycle: blueprint.lifecycle,
            createdBy: user.userId
          })
          if (room === undefined) return undefined
          yield* repo.addUser({ tenantId: user.tenantId, roomId: room.id, userId: user.userId, addedBy: user.userId })
          for (const agent of blueprint.agents) {
            yield* repo.addAgent({
              tenantId: user.tenantId,
              roomId: room.id,
              agentId: agent.agent_id,
              alwaysOn: agent.always_on,
              addedBy: user.userId
            })
          }
          yield* audited(user, "room.created", room.id, {
            external_ref: input.external_ref,
            blueprint_id: blueprint.id,
            lifecycle: blueprint.lifecycle,
            agent_ids: blueprint.agents.map((agent) => agent.agent_id)
          })
          return room
        }).pipe(sql.withTransaction, Effect.orDie)

      const create = Effect.fn("Rooms.create")(
        function*(user: UserPrincipal, input: typeof RoomSchemas.CreateRoom.Type) {
          const explicit = input.blueprint_id === undefined || input.blueprint_id === null
            ? undefined
            : yield* chooseBlueprint(user, input.blueprint_id)
          // The unique indexes decide; reading first only saves a failed insert. Losing a race sends
          // the loser back to read what the winner made.
          for (let attempt = 0; attempt < 5; attempt++) {
            const found = yield* findLive(user, input.external_ref)
            if (found !== undefined) return { created: false, room: yield* withParticipants(found.room) }
            const blueprint = explicit ?? (yield* chooseBlueprint(user, undefined))
            yield* mayUseSpace(user, blueprint.space_id)
            const inserted = yield* insertRoom(user, input, blueprint)
            if (inserted !== undefined) return { created: true, room: yield* withParticipants(inserted) }
          }
          return yield* Effect.die(new Error(`find-or-create of ref ${input.external_ref} did not settle`))
        }
      )

      const list = Effect.fn("Rooms.list")(
        function*(user: UserPrincipal, query: Parameters<Rooms["Service"]["list"]>[1]) {
          const beforeSeq = query.cursor === undefined ? undefined : Number(query.cursor)
          if (beforeSeq !== undefined && !(Number.isSafeInteger(beforeSeq) && beforeSeq > 0)) {
            return yield* new Errors.InvalidRequest({ error: "`cursor` must be the `next_cursor` of a previous page" })
          }
          if (query.blueprint_id !== undefined && !isUuid(query.blueprint_id)) return { rooms: [], next_cursor: null }
          const limit = query.limit ?? defaultPageSize
          const rows = yield* Effect.orDie(repo.list({
            tenantId: user.tenantId,
            participant: isAdmin(user.roleId) ? undefined : user.userId,
            blueprintId: query.blueprint_id,
            status: query.status,
            beforeSeq,
            limit: limit + 1
          }))
          const page = rows.slice(0, limit)
          const participants = yield* Effect.orDie(repo.participants(page.map((row) => row.id)))
          return {
            rooms: page.map((row) => toRoom(row, participants)),
            next_cursor: rows.length > limit ? String(page[page.length - 1].seq) : null
          }
        }
      )

      const get = Effect.fn("Rooms.get")(function*(user: UserPrincipal, id: string) {
        const room = yield* load(user, id)
        yield* requireParticipant(user, room, true)
        return yield* withParticipants(room)
      })

      const addParticipant = Effect.fn("Rooms.addParticipant")(function*(
        user: UserPrincipal,
        id: string,
        input: typeof RoomSchemas.AddParticipant.Type
      ) {
        if ((input.user_id === undefined) === (input.agent_id === undefined)) {
          return yield* new Errors.InvalidRequest({
            error: "send either user_id (a person) or agent_id (an agent), not both"
          })
        }
        if (input.user_id !== undefined && input.always_on !== undefined) {
          return yield* new Errors.InvalidRequest({ error: "always_on applies to agents only" })
        }
        const room = yield* load(user, id)
        yield* requireParticipant(user, room, true)
        if (room.status === "closed") return yield* roomClosed(room)
        if (input.user_id !== undefined) {
          const person = isUuid(input.user_id)
            ? yield* Effect.orDie(users.findById(user.tenantId, input.user_id))
            : undefined
          // As for an invitation: someone who cannot sign in (deactivated or blocked) is not found.
          if (person === undefined || !person.active || person.blocked) {
            return yield* new Errors.NotFound({ error: `user ${input.user_id} not found` })
          }
          const userId = input.user_id
          return yield* Effect.gen(function*() {
            yield* stillOpen(room)
            const result = yield* repo.addUser({
              tenantId: user.tenantId,
              roomId: room.id,
              userId,
              addedBy: user.userId
            })
            if (result.added) yield* audited(user, "room.participant_added", room.id, { user_id: userId })
            return { added: result.added, participant: toParticipant(result.participant) }
          }).pipe(sql.withTransaction, orDieOnSql)
        }
        const agentId = input.agent_id!
        const [agent] = isUuid(agentId) ? yield* Effect.orDie(repo.agentsById(user.tenantId, [agentId])) : []
        if (agent === undefined) return yield* new Errors.NotFound({ error: `agent ${agentId} not found` })
        if (agent.space_id !== room.space_id) {
          return yield* new Errors.InvalidRequest({
            error:
              `agent ${agentId} belongs to another space: a room's agents come from its own space (${room.space_id})`
          })
        }
        return yield* Effect.gen(function*() {
          yield* stillOpen(room)
          const result = yield* repo.addAgent({
            tenantId: user.tenantId,
            roomId: room.id,
            agentId,
            alwaysOn: input.always_on ?? false,
            addedBy: user.userId
          })
          if (result.added) {
            yield* audited(user, "room.participant_added", room.id, {
              agent_id: agentId,
              always_on: input.always_on ?? false
            })
          }
          return { added: result.added, participant: toParticipant(result.participant) }
        }).pipe(sql.withTransaction, orDieOnSql)
      })

      const invite = Effect.fn("Rooms.invite")(function*(
        user: UserPrincipal,
        id: string,
        input: typeof RoomSchemas.InviteRequest.Type,
        ownUrl: string
      ) {
        const invitedId = input.user_id?.trim() ?? ""
        if (invitedId === "") {
          return yield* new Errors.InvalidRequest({ error: "user_id is required: the id of the person to invite" })
        }
        const room = yield* load(user, id)
        yield* requireParticipant(user, room, false)
        if (invitedId === user.userId) {
          return yield* new Errors.InvalidRequest({ error: "You cannot invite yourself: you already take part." })
        }
        const person = isUuid(invitedId) ? yield* Effect.orDie(users.findById(user.tenantId, invitedId)) : undefined
        // Only someone who can sign in is invitable (spec rule 2); a blocked user gets the same 404 as a
        // deactivated or unknown one, so the answer tells no more about the account than the list does.
        if (person === undefined || !person.active || person.blocked || person.is_service_account) {
          return yield* new Errors.NotFound({ error: `user ${invitedId} not found` })
        }
        if (room.status === "closed") return yield* roomClosed(room)
        const base = Option.getOrElse(configuredBaseUrl, () => ownUrl).replace(/\/+$/, "")
        const link = `${base}/rooms/${room.id}`
        const title = `${user.nombre} invited you to a room`
        const body = room.title === null ? `Room ${room.external_ref}` : room.title
        const pushed = yield* Effect.gen(function*() {
          yield* stillOpen(room)
          yield* repo.addUser({ tenantId: user.tenantId, roomId: room.id, userId: invitedId, addedBy: user.userId })
          const notification = yield* inbox.notify({
            tenantId: user.tenantId,
            userId: invitedId,
            kind: "room_invitation",
            title,
            body,
            link,
            roomId: room.id
          })
          const queued = yield* push.enqueue({
            tenantId: user.tenantId,
            userId: invitedId,
            message: {
              type: "room_invitation",
              title,
              body,
              url: link,
              room_id: room.id,
              notification_id: notification.id
            }
          })
          yield* audited(user, "room.invited", room.id, { user_id: invitedId, in_app: true, push_queued: queued })
          return queued
        }).pipe(sql.withTransaction, orDieOnSql)
        if (pushed > 0) yield* push.wake
        return { success: true as const, invited: invitedId, link, notified: { inApp: true, pushSent: pushed > 0 } }
      })

      const invitableUsers = Effect.fn("Rooms.invitableUsers")(
        function*(user: UserPrincipal, id: string, query: string | undefined) {
          const room = yield* load(user, id)
          yield* requireParticipant(user, room, false)
          return yield* Effect.orDie(repo.invitableUsers(user.tenantId, room.id, query, 50))
        }
      )

      const close = Effect.fn("Rooms.close")(function*(user: UserPrincipal, id: string) {
        const room = yield* load(user, id)
        yield* requireParticipant(user, room, true)
        // Closed first: no message can arrive after the conversation the minutes cover. From the commit on,
        // nothing stops the minutes — not even the client going away (RoomMinutes).
        const stored = yield* Effect.gen(function*() {
          const closed = yield* Effect.orDie(repo.close(user.tenantId, room.id, user.userId, minutesLeaseSeconds))
          return closed === undefined ? undefined : yield* roomMinutes.record(closed, user.userId)
        }).pipe(Effect.uninterruptible)
        if (stored === undefined) return yield* roomClosed(room)
        return yield* withParticipants(stored)
      })

      return Rooms.of({ create, list, get, addParticipant, invite, invitableUsers, close })
    })
  )
}
