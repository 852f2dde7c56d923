/**
 * The frames of the room WebSocket (`GET /api/chats/{id}/ws`). The server
 * sends the poll envelope (`PollFrame`, the same as the poll endpoint's body)
 * whenever messages, presence or the room's status change, and answers each
 * client request with a reply that has a `type`; the client sends requests.
 */
import { Schema } from "effect"
import { MessageContent } from "./Room.ts"

const RequestId = Schema.String.check(Schema.isMaxLength(100)).annotate({
  description: "Echoed in the reply, to match replies to requests"
})

/** Client → server: append a human message (as `POST /api/chats/{id}/messages/append`). */
export const AppendRequest = Schema.Struct({
  type: Schema.Literal("append"),
  content: MessageContent,
  request_id: Schema.optionalKey(RequestId)
}).annotate({ identifier: "RoomSocketAppend" })

export const ClientFrame = AppendRequest

/**
 * The largest client frame the server reads, in bytes: an append of 16,000
 * characters, each escaped in JSON as `\uXXXX` at worst, fits. A larger one
 * closes the connection with 1009 (message too big).
 */
export const maxClientFrameBytes = 128 * 1024

/** Server → client: the append result. */
export const AppendReply = Schema.Struct({
  type: Schema.Literal("appended"),
  request_id: Schema.optionalKey(RequestId),
  id: Schema.String,
  seq: Schema.Int,
  created_at: Schema.String
}).annotate({ identifier: "RoomSocketAppended" })

/** Server → client: a request failed (its `_tag` and status as the HTTP endpoint would answer). */
export const ErrorReply = Schema.Struct({
  type: Schema.Literal("error"),
  request_id: Schema.optionalKey(RequestId),
  status: Schema.Int,
  _tag: Schema.String,
  error: Schema.String
}).annotate({ identifier: "RoomSocketError" })

export const ServerReply = Schema.Union([AppendReply, ErrorReply])
export type ServerReply = typeof ServerReply.Type

/** Close codes the server uses besides 1000 (room closed) and 1001 (server going away). */
export const closeCodes = {
  /** The session ended, the user left the room, or the flag was turned off. */
  accessRevoked: 4403
} as const
