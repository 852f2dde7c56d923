/**
 * Work rooms (spec: "Room and related", rooms endpoints). Fields beyond those
 * the spec names are designed here.
 */
import { Schema } from "effect"

export const RoomStatus = Schema.Literals(["open", "closed"])

export const Participant = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["human", "agent"]),
  user_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  always_on: Schema.Boolean,
  joined_at: Schema.String
}).annotate({ identifier: "RoomParticipant" })

export const Room = Schema.Struct({
  id: Schema.String,
  external_ref: Schema.String,
  blueprint_id: Schema.NullOr(Schema.String),
  space_id: Schema.NullOr(Schema.String),
  title: Schema.NullOr(Schema.String),
  status: RoomStatus,
  room_mode: Schema.Literal("chat"),
  chat_id: Schema.String.annotate({ description: "The room's chat: append and poll through /api/chats/{chat_id}" }),
  minutes: Schema.NullOr(Schema.String).annotate({ description: "Produced by the always-on agents when the room closes" }),
  created_at: Schema.String,
  closed_at: Schema.NullOr(Schema.String),
  participants: Schema.Array(Participant)
}).annotate({ identifier: "Room" })

export const CreateRoom = Schema.Struct({
  external_ref: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)).annotate({
    description: "Find-or-create key: an open room with this ref is returned instead of a new one"
  }),
  blueprint_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  space_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  title: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200)))
})

export const RoomCreated = Schema.Struct({ created: Schema.Literal(true), room: Room }).annotate({
  identifier: "RoomCreated",
  httpApiStatus: 201
})
export const RoomFound = Schema.Struct({ created: Schema.Literal(false), room: Room }).annotate({
  identifier: "RoomFound",
  httpApiStatus: 200
})

export const AddParticipant = Schema.Struct({
  user_id: Schema.optionalKey(Schema.String),
  agent_id: Schema.optionalKey(Schema.String),
  always_on: Schema.optionalKey(Schema.Boolean)
})

export const InviteRequest = Schema.Struct({ user_id: Schema.optionalKey(Schema.String) })

export const InviteResult = Schema.Struct({
  success: Schema.Boolean,
  invited: Schema.String.annotate({ description: "The invited user's id" }),
  deep_link: Schema.String,
  notified: Schema.Struct({ inApp: Schema.Boolean, pushSent: Schema.Boolean })
})

export const InvitableUser = Schema.Struct({
  id: Schema.String,
  nombre: Schema.String,
  email: Schema.String,
  avatar_url: Schema.NullOr(Schema.String)
})

export const AppendMessage = Schema.Struct({
  content: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(16_000))
})

export const AppendedMessage = Schema.Struct({ id: Schema.String, seq: Schema.Int, created_at: Schema.String })

export const RoomMessage = Schema.Struct({
  id: Schema.String,
  seq: Schema.Int,
  role: Schema.Literals(["user", "agent", "system"]),
  user_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  author_name: Schema.String,
  content: Schema.String,
  created_at: Schema.String
})

export const PresenceEntry = Schema.Struct({
  user_id: Schema.String,
  nombre: Schema.String,
  last_seen_at: Schema.String,
  online: Schema.Boolean
})

/** The transport-neutral poll frame (spec: "Room poll frames"). */
export const PollFrame = Schema.Struct({
  cursor: Schema.Int.annotate({ description: "Pass as `after` in the next poll" }),
  messages: Schema.Array(RoomMessage),
  presence: Schema.Array(PresenceEntry),
  room_status: RoomStatus
}).annotate({ identifier: "PollFrame" })
