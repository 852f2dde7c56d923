/**
 * The errors of work rooms, named for what went wrong (each carries its HTTP
 * status and says what to do next). The flag's 403 is the shared
 * `FeatureDisabled`; an unknown room or chat is the shared `NotFound`.
 */
import { Schema } from "effect"
import { AnswerError } from "../AnswerError.ts"

const body = { error: Schema.String }

/** 403: the caller does not take part in the room. */
export class NotParticipant extends AnswerError<NotParticipant>()("NotParticipant", body, {
  httpApiStatus: 403,
  description: "The caller does not take part in the room: a participant can invite them."
}) {}

/** 403: the caller may not use the blueprint's space (a Space Admin of other spaces). */
export class SpaceNotAccessible extends AnswerError<SpaceNotAccessible>()("SpaceNotAccessible", body, {
  httpApiStatus: 403,
  description: "The caller has no access to the space of the blueprint."
}) {}

/** 409: the room is closed; nothing can be added to it. */
export class RoomClosed extends AnswerError<RoomClosed>()("RoomClosed", body, {
  httpApiStatus: 409,
  description:
    "The room is closed: find-or-create its ref again to reopen a persistent room or start a new ephemeral one."
}) {}

/** 400: the chat is a classic chat (POST /v1/chat/completions), not a room's. */
export class NotRoomChat extends AnswerError<NotRoomChat>()("NotRoomChat", body, {
  httpApiStatus: 400,
  description: "The chat has no room_mode: read it with GET /v1/chat/history/{chatId}."
}) {}

/**
 * 426: the room's WebSocket was asked for without a WebSocket upgrade
 * (RFC 9110 §15.5.22); the answer carries `Upgrade: websocket`.
 */
export class UpgradeRequired extends AnswerError<UpgradeRequired>()("UpgradeRequired", body, {
  httpApiStatus: 426,
  description:
    "This endpoint speaks WebSocket only: connect with `Connection: Upgrade` and `Upgrade: websocket` (a WebSocket client does), or poll GET /api/chats/{id}/messages."
}) {}
