/** In-app notifications: the signed-in user's inbox (room invitations today). */
import { Schema } from "effect"

export const NotificationKind = Schema.Literal("room_invitation")

export const Notification = Schema.Struct({
  id: Schema.String,
  kind: NotificationKind,
  title: Schema.String,
  body: Schema.String,
  link: Schema.String.annotate({ description: "Where the notification leads, e.g. the room's deep link" }),
  room_id: Schema.NullOr(Schema.String),
  read_at: Schema.NullOr(Schema.String).annotate({ description: "Null while unread" }),
  created_at: Schema.String
}).annotate({ identifier: "Notification" })
export type Notification = typeof Notification.Type

export const NotificationList = Schema.Struct({
  notifications: Schema.Array(Notification),
  unread_count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(2_147_483_647)),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "Pass as `cursor` for the next page; null on the last"
  })
}).annotate({ identifier: "NotificationList" })
