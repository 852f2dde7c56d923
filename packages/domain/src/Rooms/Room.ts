/**
 * Work rooms (spec: "Room and related", the Room rows of "States and
 * transitions", "Session interface: rooms, chats, blueprints"): people and
 * agents in one conversation. Fields the spec leaves open ("not shown") are
 * designed here and described in the OpenAPI document.
 */
import { Schema } from "effect"
import { isNotBlank, isStorable } from "../Text.ts"

export const RoomStatus = Schema.Literals(["open", "closed"])
export type RoomStatus = typeof RoomStatus.Type

/** A person taking part. */
export const HumanParticipant = Schema.Struct({
  user_id: Schema.String,
  nombre: Schema.String.annotate({ description: "The user's display name" }),
  joined_at: Schema.String
}).annotate({ identifier: "HumanParticipant" })

/** An agent taking part: it answers when a message mentions it (`@Name`); always-on agents write the minutes. */
export const AgentParticipant = Schema.Struct({
  agent_id: Schema.String,
  name: Schema.String,
  always_on: Schema.Boolean,
  joined_at: Schema.String
}).annotate({ identifier: "AgentParticipant" })

export const Participant = Schema.Union([HumanParticipant, AgentParticipant]).annotate({
  identifier: "RoomParticipant"
})
export type Participant = typeof Participant.Type

/** One decision of the minutes and who owns it (null when the conversation names nobody). */
export const Decision = Schema.Struct({
  decision: Schema.String,
  owner: Schema.NullOr(Schema.String)
}).annotate({ identifier: "RoomDecision" })

/** What the always-on agents wrote when the room closed. */
export const Minutes = Schema.Struct({
  summary: Schema.String.annotate({ description: "Written by the summary agent" }),
  decisions: Schema.Array(Decision).annotate({
    description: "Written by the decisions agent: each decision and its owner"
  }),
  authors: Schema.Array(Schema.Struct({
    agent_id: Schema.String,
    name: Schema.String,
    part: Schema.Literals(["summary", "decisions"])
  })).annotate({ description: "The always-on agents that wrote each part (empty when the room had none)" }),
  model: Schema.String.annotate({ description: "The language model that produced them" }),
  message_count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(2_147_483_647))
    .annotate({ description: "The messages the minutes cover (the period's last 1,000 at most)" }),
  produced_at: Schema.String
}).annotate({ identifier: "RoomMinutes" })
export type Minutes = typeof Minutes.Type

export const Room = Schema.Struct({
  id: Schema.String,
  external_ref: Schema.String,
  title: Schema.NullOr(Schema.String),
  blueprint_id: Schema.NullOr(Schema.String).annotate({ description: "Null once the blueprint was deleted" }),
  space_id: Schema.String,
  lifecycle: Schema.Literals(["ephemeral", "persistent"]).annotate({
    description: "Copied from the blueprint when the room was made"
  }),
  status: RoomStatus,
  room_mode: Schema.Literal("chat"),
  chat_id: Schema.String.annotate({
    description: "The room's chat: append, poll and the WebSocket live at /api/chats/{chat_id}"
  }),
  created_at: Schema.String,
  closed_at: Schema.NullOr(Schema.String),
  participants: Schema.Array(Participant),
  minutes: Schema.NullOr(Minutes).annotate({
    description:
      "Null until the room closes. They cover the conversation since the room opened: for a persistent room, since it was last reopened (each period has its own minutes, also appended to the chat)"
  })
}).annotate({ identifier: "Room" })
export type Room = typeof Room.Type

export const maxExternalRefLength = 256

export const CreateRoom = Schema.Struct({
  external_ref: Schema.String.check(
    Schema.isMinLength(1),
    Schema.isMaxLength(maxExternalRefLength),
    isNotBlank,
    isStorable
  ).annotate({
    description:
      "Find-or-create key, e.g. the id of a ticket or an incident: an open room with this ref is returned instead of a new one. Not only white space (400)"
  }),
  blueprint_id: Schema.optionalKey(Schema.NullOr(Schema.String)).annotate({
    description:
      "The template; default the tenant's seeded ephemeral blueprint (POST /api/room-blueprints/seed-defaults)"
  }),
  title: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(200), isStorable)))
})

export const RoomCreated = Schema.Struct({ created: Schema.Literal(true), room: Room }).annotate({
  identifier: "RoomCreated",
  httpApiStatus: 201
})
export const RoomFound = Schema.Struct({ created: Schema.Literal(false), room: Room }).annotate({
  identifier: "RoomFound",
  httpApiStatus: 200
})

export const RoomList = Schema.Struct({
  rooms: Schema.Array(Room),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "Pass as `cursor` for the next page; null on the last"
  })
}).annotate({ identifier: "RoomList" })

/** `{user_id}` adds a person; `{agent_id, always_on}` an agent of the room's space. */
export const AddParticipant = Schema.Struct({
  user_id: Schema.optionalKey(Schema.String),
  agent_id: Schema.optionalKey(Schema.String),
  always_on: Schema.optionalKey(Schema.Boolean).annotate({ description: "Agents only; default false" })
})

export const ParticipantAdded = Schema.Struct({ added: Schema.Literal(true), participant: Participant }).annotate({
  identifier: "ParticipantAdded",
  httpApiStatus: 201
})
export const ParticipantPresent = Schema.Struct({ added: Schema.Literal(false), participant: Participant }).annotate({
  identifier: "ParticipantPresent",
  httpApiStatus: 200
})

export const InviteRequest = Schema.Struct({ user_id: Schema.optionalKey(Schema.String) })

export const InviteResult = Schema.Struct({
  success: Schema.Literal(true),
  invited: Schema.String.annotate({ description: "The invited user's id" }),
  link: Schema.String.annotate({
    description: "The deep link to the room the invitation carries (APP_BASE_URL/rooms/{id})"
  }),
  notified: Schema.Struct({
    inApp: Schema.Boolean.annotate({ description: "Always true: an in-app notification was stored" }),
    pushSent: Schema.Boolean.annotate({ description: "True when at least one Web Push was queued" })
  })
}).annotate({ identifier: "InviteResult" })

export const InvitableUser = Schema.Struct({
  id: Schema.String,
  nombre: Schema.String,
  email: Schema.String,
  avatar_url: Schema.NullOr(Schema.String)
}).annotate({ identifier: "InvitableUser" })

export const maxInvitableUsers = 50

// -----------------------------------------------------------------------------
// The room's chat

export const maxRoomMessageLength = 16_000

export const MessageContent = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(maxRoomMessageLength),
  isNotBlank,
  isStorable
)

/** A human message; `user_id`, `agent_id`, `role` or `id` in the payload are ignored (spec: rule 3). */
export const AppendMessage = Schema.Struct({ content: MessageContent })

export const AppendedMessage = Schema.Struct({
  id: Schema.String,
  seq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(2_147_483_647)),
  created_at: Schema.String
}).annotate({ identifier: "AppendedMessage" })

const Seq = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(2_147_483_647)).annotate({
  description: "Position in the chat: 1, 2, 3... without gaps"
})

export const UserMessage = Schema.Struct({
  id: Schema.String,
  seq: Seq,
  role: Schema.Literal("user"),
  user_id: Schema.NullOr(Schema.String).annotate({ description: "Null once the user was deleted" }),
  author_name: Schema.String,
  content: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "RoomUserMessage" })

export const AgentMessage = Schema.Struct({
  id: Schema.String,
  seq: Seq,
  role: Schema.Literal("agent"),
  agent_id: Schema.NullOr(Schema.String).annotate({ description: "Null once the agent was deleted" }),
  author_name: Schema.String,
  content: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "RoomAgentMessage" })

export const RoomMessage = Schema.Union([UserMessage, AgentMessage]).annotate({ identifier: "RoomMessage" })
export type RoomMessage = typeof RoomMessage.Type

export const PresenceState = Schema.Literals(["online", "away"])

export const PresenceEntry = Schema.Struct({
  user_id: Schema.String,
  nombre: Schema.String,
  last_seen_at: Schema.String,
  state: PresenceState.annotate({ description: "`online` while polling or connected over the WebSocket, else `away`" })
}).annotate({ identifier: "PresenceEntry" })
export type PresenceEntry = typeof PresenceEntry.Type

export const Cursor = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(2_147_483_647))

/** The transport-neutral poll frame (spec: "Room poll frames"); the WebSocket sends the same. */
export const PollFrame = Schema.Struct({
  cursor: Cursor.annotate({ description: "The `seq` of the last message delivered: pass it as `after` next time" }),
  messages: Schema.Array(RoomMessage),
  presence: Schema.Array(PresenceEntry),
  room_status: RoomStatus
}).annotate({ identifier: "PollFrame" })
export type PollFrame = typeof PollFrame.Type

export const maxPollLimit = 500
export const defaultPollLimit = 100
export const maxPollWaitSeconds = 30

export const PollQuery = {
  after: Schema.optionalKey(Cursor).annotate({
    description: "A cursor from an earlier frame; default 0 (from the start)"
  }),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(maxPollLimit))
  ).annotate({
    description: `Most messages per frame; default ${defaultPollLimit}`
  }),
  wait: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(maxPollWaitSeconds))
  ).annotate({
    description: "Long poll: seconds to wait for something new when nothing is (0–30; default 0)"
  })
}
