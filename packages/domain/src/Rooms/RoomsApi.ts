import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc, openBody } from "../Doc.ts"
import { AccessDenied, InvalidRequest, NotFound } from "../Errors.ts"
import { SessionAuth } from "../Security.ts"
import { StorableString } from "../Text.ts"
import {
  AddParticipant,
  AppendedMessage,
  AppendMessage,
  CreateRoom,
  Cursor,
  InvitableUser,
  InviteRequest,
  InviteResult,
  ParticipantAdded,
  ParticipantPresent,
  PollFrame,
  PollQuery,
  Room,
  RoomCreated,
  RoomFound,
  RoomList,
  RoomStatus
} from "./Room.ts"
import { NotParticipant, NotRoomChat, RoomClosed, SpaceNotAccessible, UpgradeRequired } from "./RoomsErrors.ts"
import { WarRoomsEnabled } from "./WarRooms.ts"

const id = { id: Schema.String }

const flagNote = "Behind the tenant flag `feature_war_rooms`: 403 `FeatureDisabled` while it is off."

/** Work rooms (`/api/rooms`), behind the `feature_war_rooms` flag. */
export class RoomsApi extends HttpApiGroup.make("rooms")
  .add(
    HttpApiEndpoint.post("create", "/", {
      payload: openBody(CreateRoom),
      success: [RoomCreated, RoomFound],
      error: [InvalidRequest, NotFound, SpaceNotAccessible]
    }).annotateMerge(doc(
      "Find or create a room",
      `Idempotent by \`external_ref\` (safe to retry from an incoming webhook): 201 \`{created: true, room}\` when a room is made; 200 \`{created: false, room}\` when the ref already has an open room. Concurrent calls with one ref make exactly one room.

Lifecycles: a room from a **persistent** blueprint is the only instance its ref will ever have — once closed, the same ref reopens it (200, \`created: false\`). A room from an **ephemeral** blueprint is one instance: after it closes, the same ref creates a new room (201).

The caller and the blueprint's agents take part in a new room; a caller who finds or reopens a room joins it. Without \`blueprint_id\` the tenant's seeded ephemeral blueprint is used (400 when there is none). 400 for an \`external_ref\` that is empty or only white space. 404 for an unknown blueprint; 403 \`SpaceNotAccessible\` when the caller may not use the blueprint's space (a Space Admin of other spaces). ${flagNote}`
    )),
    HttpApiEndpoint.get("list", "/", {
      query: {
        blueprint_id: Schema.optionalKey(StorableString),
        status: Schema.optionalKey(RoomStatus),
        limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(100))),
        cursor: Schema.optionalKey(Schema.String)
      },
      success: RoomList,
      error: [InvalidRequest]
    }).annotateMerge(doc(
      "List rooms",
      `Newest first, \`limit\` (default 50) per page; pass \`next_cursor\` as \`cursor\` for the next. Administrators see every room of the tenant, everyone else only the rooms they take part in. ${flagNote}`
    )),
    HttpApiEndpoint.get("get", "/:id", { params: id, success: Room, error: [NotFound, NotParticipant] })
      .annotateMerge(
        doc(
          "Read a room",
          `With its participants and, once closed, its minutes. 403 when the caller does not take part (administrators may read any room); 404 for an unknown room or another tenant's. ${flagNote}`
        )
      ),
    HttpApiEndpoint.post("addParticipant", "/:id/participants", {
      params: id,
      payload: openBody(AddParticipant),
      success: [ParticipantAdded, ParticipantPresent],
      error: [InvalidRequest, NotFound, NotParticipant, RoomClosed]
    }).annotateMerge(doc(
      "Add a participant",
      `\`{user_id}\` adds a person, \`{agent_id, always_on}\` an agent of the room's space (another space's agent: 400). 201 when added; 200 with the same participant when already there. Participants and administrators may add; 404 for an unknown room, user or agent; 409 when the room is closed. ${flagNote}`
    )),
    HttpApiEndpoint.post("close", "/:id/close", {
      params: id,
      success: Room,
      error: [NotFound, NotParticipant, RoomClosed]
    })
      .annotateMerge(doc(
        "Close a room",
        `The always-on agents write the minutes from the conversation (the summary agent a summary, the decisions agent the decisions and their owners) with the configured model — extractively with the embedded one; they are stored on the room and appended to its chat as agent messages. WebSocket clients get a last frame with \`room_status: closed\`. Participants and administrators may close; 409 when already closed. ${flagNote}`
      )),
    HttpApiEndpoint.post("invite", "/:id/invite", {
      params: id,
      payload: openBody(InviteRequest),
      success: InviteResult.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotFound, NotParticipant, RoomClosed]
    }).annotateMerge(doc(
      "Invite a user",
      `Adds the user as a participant and delivers an invitation carrying a deep link to the room (\`APP_BASE_URL\`/rooms/{id}): always an in-app notification (GET /api/notifications), and a Web Push when the tenant flag \`push_notifications\` is on, the user has not opted out and has push subscriptions (\`pushSent\`). 400 for a missing \`user_id\` or a self-invitation; 403 when the inviter does not take part; 404 for an unknown user, or one who cannot sign in (deactivated or blocked) or is a service account; 409 when the room is closed. ${flagNote}`
    )),
    HttpApiEndpoint.get("invitableUsers", "/:id/invitable-users", {
      params: id,
      query: { q: Schema.optionalKey(StorableString.check(Schema.isMaxLength(200))) },
      success: Schema.Array(InvitableUser),
      error: [InvalidRequest, NotFound, NotParticipant]
    }).annotateMerge(doc(
      "Users who can be invited",
      `The tenant's active people not yet taking part (blocked users and service accounts excluded), sorted by name, at most 50; \`q\` matches name or email, case-insensitively and literally (\`%\` and \`_\` are not wildcards). Any participant may call it; 403 otherwise. ${flagNote}`
    ))
  )
  .middleware(WarRoomsEnabled)
  .middleware(SessionAuth)
  .prefix("/api/rooms")
  .annotateMerge(OpenApi.annotations({
    title: "Rooms",
    description:
      "Work rooms: people and agents in one live conversation around one piece of work (found or created by an external reference), its participants, invitations, poll and WebSocket frames, minutes at close, and the blueprints rooms are made from. Behind the tenant flag `feature_war_rooms`."
  }))
{}

/** The chats of rooms (`/api/chats/{id}`): append, poll and the WebSocket. */
export class RoomChatsApi extends HttpApiGroup.make("roomChats")
  .add(
    HttpApiEndpoint.post("append", "/:id/messages/append", {
      params: id,
      payload: openBody(AppendMessage),
      success: AppendedMessage.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotRoomChat, NotFound, NotParticipant, RoomClosed]
    }).annotateMerge(doc(
      "Append a human message",
      `The id, the \`seq\` (1, 2, 3... per chat, without gaps, even under concurrent appends) and the attribution come from the server and the session: \`user_id\`, \`agent_id\`, \`role\` or \`id\` in the payload are ignored. A message that mentions an agent participant (\`@Name\`) makes it answer through the chat engine (knowledge, actions, slot filling, confirmations); its reply arrives as an agent message. 400 for empty or oversize content (16,000 characters) or a classic chat; 403 when not a participant; 404 unknown chat; 409 closed room. ${flagNote}`
    )),
    HttpApiEndpoint.get("poll", "/:id/messages", {
      params: id,
      query: PollQuery,
      success: PollFrame,
      error: [InvalidRequest, NotRoomChat, NotFound, NotParticipant]
    }).annotateMerge(doc(
      "Poll a room's chat",
      `The messages after the cursor \`after\` (a message \`seq\`), the presence of the participants — the caller's is updated by this request — and the room's status. With \`wait\` (seconds, at most 30) it is a long poll: it answers as soon as a message arrives, presence changes or the room closes (on any replica), or when the wait is over. \`room_status\` turns \`closed\` once the close is complete: the minutes are stored and appended in the same step, so the messages of a frame that says \`closed\` include them (while they are being written the room shows \`open\`, and appends already answer 409). 400 for a classic chat without room_mode; 403 when not a participant. ${flagNote}`
    )),
    HttpApiEndpoint.get("socket", "/:id/ws", {
      params: id,
      query: { after: Schema.optionalKey(Cursor) },
      success: HttpApiSchema.Empty(101).annotate({ description: "Switching Protocols: the connection is a WebSocket" }),
      error: [InvalidRequest, NotRoomChat, NotFound, NotParticipant, AccessDenied, UpgradeRequired]
    }).annotateMerge(doc(
      "Room WebSocket",
      `Upgrade with the session cookie. The server sends the poll envelope \`{cursor, messages, presence, room_status}\` as a JSON text frame on connect (messages after \`after\`) and whenever messages, presence or the room's status change, on any replica. The client may send \`{"type": "append", "content": "...", "request_id": "..."}\` and gets \`{"type": "appended", id, seq, created_at}\` or \`{"type": "error", status, _tag, error}\` back. Closing the room sends a last frame with \`room_status: closed\` that carries the minutes' messages (a catch-up on a closed room sends every batch first), then the socket closes with 1000; losing access (session ended, user blocked or deactivated, no longer a participant, flag off) closes it with 4403: checked before every append and every 15 s. A client frame over 128 KiB closes it with 1009. Same authorization as the poll; a browser \`Origin\` must be the service's own or one of \`CORS_ORIGINS\` (else 403). Without an upgrade (\`Connection: Upgrade\` and \`Upgrade: websocket\`): 426 \`UpgradeRequired\` with \`Upgrade: websocket\`. A malformed handshake — \`Sec-WebSocket-Key\` not the base64 of 16 bytes, \`Sec-WebSocket-Version\` not 13 (the answer then carries \`Sec-WebSocket-Version: 13\`), an invalid \`Sec-WebSocket-Protocol\` — is 400 \`InvalidRequest\` naming the header. ${flagNote}`
    ))
  )
  .middleware(WarRoomsEnabled)
  .middleware(SessionAuth)
  .prefix("/api/chats")
  .annotateMerge(OpenApi.annotations({
    title: "Rooms",
    description:
      "Work rooms: people and agents in one live conversation around one piece of work (found or created by an external reference), its participants, invitations, poll and WebSocket frames, minutes at close, and the blueprints rooms are made from. Behind the tenant flag `feature_war_rooms`."
  }))
{}
