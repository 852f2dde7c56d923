/**
 * The in-app inbox: notifications stored for a user (room invitations), read
 * back newest first with the number still unread, and marked read.
 */
import { Errors, type Inbox as InboxSchemas, type UserPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { isUuid } from "../Platform/Ids.ts"
import { InboxRepo, type NewNotification, type NotificationRow } from "./InboxRepo.ts"

const defaultLimit = 50

const toNotification = (row: NotificationRow): InboxSchemas.Notification => ({
  id: row.id,
  kind: row.kind,
  title: row.title,
  body: row.body,
  link: row.link,
  room_id: row.room_id,
  read_at: row.read_at === null ? null : row.read_at.toISOString(),
  created_at: row.created_at.toISOString()
})

export class Inbox extends Context.Service<Inbox, {
  /** Stores a notification; runs in the caller's transaction when there is one. */
  readonly notify: (notification: NewNotification) => Effect.Effect<InboxSchemas.Notification, SqlError>
  readonly list: (
    user: UserPrincipal,
    page: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
  ) => Effect.Effect<typeof InboxSchemas.NotificationList.Type, Errors.InvalidRequest>
  readonly markRead: (user: UserPrincipal, id: string) => Effect.Effect<InboxSchemas.Notification, Errors.NotFound>
}>()("@agent-platform/server/Inbox/Inbox") {
  static readonly layer = Layer.effect(
    Inbox,
    Effect.gen(function*() {
      const repo = yield* InboxRepo
      return Inbox.of({
        notify: (notification) => Effect.map(repo.insert(notification), toNotification),
        list: (user, page) =>
          Effect.gen(function*() {
            const cursor = page.cursor === undefined ? undefined : Number(page.cursor)
            if (cursor !== undefined && !(Number.isSafeInteger(cursor) && cursor > 0)) {
              return yield* new Errors.InvalidRequest({
                error: "`cursor` must be the `next_cursor` of a previous page"
              })
            }
            const limit = page.limit ?? defaultLimit
            const rows = yield* Effect.orDie(repo.list(user.tenantId, user.userId, cursor, limit + 1))
            const shown = rows.slice(0, limit)
            return {
              notifications: shown.map(toNotification),
              unread_count: yield* Effect.orDie(repo.unreadCount(user.tenantId, user.userId)),
              next_cursor: rows.length > limit ? String(shown[shown.length - 1].seq) : null
            }
          }),
        markRead: (user, id) =>
          Effect.gen(function*() {
            const row = isUuid(id) ? yield* Effect.orDie(repo.markRead(user.tenantId, user.userId, id)) : undefined
            if (row === undefined) return yield* new Errors.NotFound({ error: `notification ${id} not found` })
            return toNotification(row)
          })
      })
    })
  ).pipe(Layer.provide(InboxRepo.layer))
}
