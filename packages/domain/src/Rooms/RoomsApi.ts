import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { AccessDenied, Conflict, FeatureDisabled, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import {
  AddParticipant,
  AppendedMessage,
  AppendMessage,
  CreateRoom,
  InvitableUser,
  InviteRequest,
  InviteResult,
  Participant,
  PollFrame,
  Room,
  RoomCreated,
  RoomFound,
  RoomStatus
} from "./Room.ts"

const id = { id: Schema.String }
const errors = [InvalidRequest, FeatureDisabled, AccessDenied, NotFound, NotImplemented] as const

/** Work rooms (`/api/rooms`); behind the `feature_war_rooms` flag (403 when off). */
export class RoomsApi extends HttpApiGroup.make("rooms")
  .add(
    HttpApiEndpoint.post("create", "/", { payload: CreateRoom, success: [RoomCreated, RoomFound], error: errors })
      .annotateMerge(doc("Find or create a room", "201 when created; 200 with `created: false` when an open room with this `external_ref` exists (idempotent for webhook retries).")),
    HttpApiEndpoint.get("list", "/", {
      query: { blueprint_id: Schema.optionalKey(Schema.String), status: Schema.optionalKey(RoomStatus) },
      success: Schema.Array(Room),
      error: errors
    }).annotateMerge(doc("List rooms", "Non-admins see only rooms they take part in.")),
    HttpApiEndpoint.get("get", "/:id", { params: id, success: Room, error: errors })
      .annotateMerge(doc("Read a room", "403 when not a participant.")),
    HttpApiEndpoint.post("addParticipant", "/:id/participants", {
      params: id,
      payload: AddParticipant,
      success: Participant.pipe(HttpApiSchema.status(201)),
      error: [...errors, Conflict]
    }).annotateMerge(doc("Add a participant", "`user_id` for a human, or `agent_id` (with `always_on`) for an agent.")),
    HttpApiEndpoint.post("close", "/:id/close", { params: id, success: Room, error: [...errors, Conflict] })
      .annotateMerge(doc("Close a room", "Always-on agents produce the minutes. 409 when already closed.")),
    HttpApiEndpoint.post("invite", "/:id/invite", {
      params: id,
      payload: InviteRequest,
      success: InviteResult.pipe(HttpApiSchema.status(201)),
      error: [...errors, Conflict]
    }).annotateMerge(doc(
      "Invite a user",
      "Adds the user as a participant, sends an in-app notification with a deep link and, when `push_notifications` is on and the user has push subscriptions, a Web Push. 400 for a missing user_id or a self-invitation; 403 when the inviter is not a participant; 404 unknown user; 409 closed room."
    )),
    HttpApiEndpoint.get("invitableUsers", "/:id/invitable-users", {
      params: id,
      query: { q: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200))) },
      success: Schema.Array(InvitableUser),
      error: errors
    }).annotateMerge(doc("Users who can be invited", "The tenant's active humans not yet taking part, filtered by name or email; at most 50."))
  )
  .middleware(SessionAuth)
  .prefix("/api/rooms")
  .annotateMerge(OpenApi.annotations({ title: "Rooms" }))
{}

/** Room chats (`/api/chats/{id}/messages`). */
export class RoomChatsApi extends HttpApiGroup.make("roomChats")
  .add(
    HttpApiEndpoint.post("append", "/:id/messages/append", {
      params: id,
      payload: AppendMessage,
      success: AppendedMessage.pipe(HttpApiSchema.status(201)),
      error: [...errors, Conflict]
    }).annotateMerge(doc("Append a human message", "Id and attribution come from the server and the session; `user_id`, `agent_id` or `role` in the payload are ignored.")),
    HttpApiEndpoint.get("poll", "/:id/messages", {
      params: id,
      query: { after: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))) },
      success: PollFrame,
      error: errors
    }).annotateMerge(doc("Poll a room chat", "Messages after the cursor, presence (the caller's is updated by this call) and the room status. 400 for a classic chat without room_mode; 403 when not a participant."))
  )
  .middleware(SessionAuth)
  .prefix("/api/chats")
  .annotateMerge(OpenApi.annotations({ title: "Rooms" }))
{}
