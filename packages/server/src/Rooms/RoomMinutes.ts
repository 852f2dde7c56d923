/**
 * A closed room always gets its minutes. The close commits first — no message
 * can arrive after the conversation the minutes cover — and the minutes take
 * model calls after it, so two things could leave a room closed without them
 * for good (another close answers 409):
 *
 * - the request going away: a client that disconnects interrupts its
 *   handler. From the close's commit on, `Rooms.close` runs uninterruptibly
 *   (as ActionRunner records an execution), so the minutes are written
 *   whether or not anyone waits for them;
 * - the process stopping (a crash, a kill) in between. The close marks the
 *   minutes due (`rooms.minutes_due_at`, `minutesLeaseSeconds` on), storing
 *   them clears it, and every job process takes rooms past it
 *   (`recoverDue`, a step of the jobs worker) under the same lease, `FOR
 *   UPDATE SKIP LOCKED` as the other queues: each room is worked by one
 *   process at a time, and one that dies mid-way leaves it to the next.
 *
 * Writing the minutes before the close would keep the room open while the
 * model works: messages sent meanwhile would land in a room whose minutes do
 * not cover them. The lease outlasts the close's own two model calls (60 s
 * each), so the recovery does not race a close still at work; if it does, the
 * minutes are stored once (the first to store them wins, the other's are
 * dropped with their messages).
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import { ChatRepo } from "../Chat/ChatRepo.ts"
import { Minutes } from "./Minutes.ts"
import { RoomFeeds } from "./RoomFeeds.ts"
import { type RoomRow, RoomsRepo } from "./RoomsRepo.ts"

/** Messages the minutes are written from (the most recent). */
const minutesTranscriptLimit = 1000
/** How long a close (or a recovery) has to store the minutes before the recovery takes the room. */
export const minutesLeaseSeconds = 180
/** Rooms a recovery cycle takes at most. */
const recoveryBatch = 10

export class RoomMinutes extends Context.Service<RoomMinutes, {
  /**
   * Writes the minutes of a room just closed by `closedBy`, stores them on the
   * room, appends them as their authors' messages and records `room.closed`
   * in the audit chain, in one transaction, then tells the room's feeds.
   * Returns the room as stored — as another writer stored it when it got
   * there first; when the room was reopened since, as this close left it,
   * with the minutes written for it (a reopen finishes the minutes first).
   */
  readonly record: (room: RoomRow, closedBy: string | null) => Effect.Effect<RoomRow>
  /** One cycle of the recovery: the minutes of the rooms past `minutes_due_at`. */
  readonly recoverDue: Effect.Effect<void>
}>()("@agent-platform/server/Rooms/RoomMinutes") {
  static readonly layer = Layer.effect(
    RoomMinutes,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* RoomsRepo
      const chats = yield* ChatRepo
      const minutes = yield* Minutes
      const audit = yield* AuditLog
      const feeds = yield* RoomFeeds

      const record = Effect.fnUntraced(function*(room: RoomRow, closedBy: string | null) {
        const [transcript, participants, agents] = yield* Effect.all([
          // This period's conversation: a persistent room's earlier periods have their own minutes.
          repo.lastMessages(room.chat_id, Number(room.period_after_seq), minutesTranscriptLimit),
          repo.participants([room.id]),
          repo.agents(room.id)
        ])
        const written = yield* minutes.write({
          transcript: transcript.map((m) => ({ author: m.author_name ?? "someone", role: m.role, content: m.content })),
          participants: participants.map((p) => p.name),
          agents
        })
        const stored = yield* Effect.gen(function*() {
          const stored = yield* repo.saveMinutes(room.tenant_id, room.id, written.minutes)
          // Stored by another writer, or reopened meanwhile: theirs stands, these are dropped.
          if (stored === undefined) return undefined
          for (const message of written.messages) {
            yield* chats.appendMessage({
              tenantId: room.tenant_id,
              chatId: room.chat_id,
              role: "agent",
              content: message.content,
              agentId: message.agentId,
              tokensInput: 0,
              tokensOutput: 0
            })
          }
          yield* audit.append("audit_logs", {
            tenantId: room.tenant_id,
            event: "room.closed",
            actor: closedBy === null ? "system:room-minutes" : `user:${closedBy}`,
            target: `room:${room.id}`,
            data: {
              message_count: written.minutes.message_count,
              decisions: written.minutes.decisions.length,
              model: written.minutes.model
            }
          })
          return stored
        }).pipe(sql.withTransaction)
        if (stored === undefined) {
          // Stored by another writer (the recovery, or a reopen finishing them first): the room as stored while it
          // is still closed; once reopened, the room as this close left it, with the minutes written for it.
          const current = yield* repo.find(room.tenant_id, room.id)
          return current !== undefined && current.status === "closed" && current.minutes !== null
            ? current
            : { ...room, minutes: written.minutes, minutes_due_at: null }
        }
        yield* feeds.signal(room.chat_id, "status")
        return stored
      }, Effect.orDie)

      const recoverDue = Effect.gen(function*() {
        const due = yield* Effect.orDie(repo.claimDueMinutes(recoveryBatch, minutesLeaseSeconds))
        for (const room of due) {
          // One room's failure leaves the others to go on; its own minutes are taken again when the lease ends.
          yield* record(room, room.closed_by).pipe(
            Effect.andThen(Effect.logWarning("wrote the minutes of a room its close left without them")),
            Effect.catchCause((cause) =>
              Effect.logWarning("could not write a closed room's minutes; they are taken again later", cause)
            ),
            Effect.annotateLogs({ room_id: room.id, tenant_id: room.tenant_id })
          )
        }
      })

      return RoomMinutes.of({ record, recoverDue })
    })
  )
}
