/** The notifications table: each user's in-app inbox. */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface NotificationRow {
  readonly id: string
  readonly seq: string | number
  readonly kind: "room_invitation"
  readonly title: string
  readonly body: string
  readonly link: string
  readonly room_id: string | null
  readonly read_at: Date | null
  readonly created_at: Date
}

export interface NewNotification {
  readonly tenantId: string
  readonly userId: string
  readonly kind: "room_invitation"
  readonly title: string
  readonly body: string
  readonly link: string
  readonly roomId: string | null
}

export class InboxRepo extends Context.Service<InboxRepo, {
  readonly insert: (notification: NewNotification) => Effect.Effect<NotificationRow, SqlError>
  /** The user's notifications older than `beforeSeq`, newest first. */
  readonly list: (
    tenantId: string,
    userId: string,
    beforeSeq: number | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<NotificationRow>, SqlError>
  readonly unreadCount: (tenantId: string, userId: string) => Effect.Effect<number, SqlError>
  /** Sets `read_at` once; undefined for another user's or an unknown notification. */
  readonly markRead: (
    tenantId: string,
    userId: string,
    id: string
  ) => Effect.Effect<NotificationRow | undefined, SqlError>
}>()("@agent-platform/server/Inbox/InboxRepo") {
  static readonly layer = Layer.effect(
    InboxRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const columns = sql.literal("id, seq, kind, title, body, link, room_id, read_at, created_at")
      return InboxRepo.of({
        insert: (n) =>
          Effect.map(
            sql<NotificationRow>`
              INSERT INTO notifications (tenant_id, user_id, kind, title, body, link, room_id)
              VALUES (${n.tenantId}, ${n.userId}, ${n.kind}, ${n.title}, ${n.body}, ${n.link}, ${n.roomId})
              RETURNING ${columns}`,
            (rows) => rows[0]
          ),
        list: (tenantId, userId, beforeSeq, limit) =>
          sql<NotificationRow>`
            SELECT ${columns} FROM notifications
            WHERE tenant_id = ${tenantId} AND user_id = ${userId} ${
            beforeSeq === undefined ? sql`` : sql`AND seq < ${beforeSeq}`
          }
            ORDER BY seq DESC LIMIT ${limit}`,
        unreadCount: (tenantId, userId) =>
          Effect.map(
            sql<{ count: number | string }>`
              SELECT count(*)::int AS count FROM notifications
              WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND read_at IS NULL`,
            (rows) => Number(rows[0]?.count ?? 0)
          ),
        markRead: (tenantId, userId, id) =>
          Effect.map(
            sql<NotificationRow>`
              UPDATE notifications SET read_at = COALESCE(read_at, now())
              WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND id = ${id}
              RETURNING ${columns}`,
            (rows) => rows[0]
          )
      })
    })
  )
}
