/**
 * Work rooms as the server wires them: blueprints, rooms and their chats,
 * live feeds, agents taking part, minutes, and the invitations they send —
 * the in-app inbox and Web Push (subscriptions, the queue and its worker).
 * Needs the core (SQL, notifications, audit), identity (users, tenants,
 * Space Admins), the catalog's outbound guard and breaker, and chat (engine,
 * models).
 */
import { Layer } from "effect"
import { OutboundHttp } from "../Actions/OutboundHttp.ts"
import { Blueprints } from "../Blueprints/Blueprints.ts"
import { ChatRepo } from "../Chat/ChatRepo.ts"
import { Inbox } from "../Inbox/Inbox.ts"
import { PushDeliveriesRepo } from "../Push/PushDeliveriesRepo.ts"
import { PushDelivery } from "../Push/PushDelivery.ts"
import { PushQueue } from "../Push/PushQueue.ts"
import { PushSubscriptions } from "../Push/PushSubscriptions.ts"
import { PushSubscriptionsRepo } from "../Push/PushSubscriptionsRepo.ts"
import { VapidKeys } from "../Push/VapidKeys.ts"
import { Minutes } from "./Minutes.ts"
import { RoomAgents } from "./RoomAgents.ts"
import { RoomChat } from "./RoomChat.ts"
import { RoomFeeds } from "./RoomFeeds.ts"
import { RoomMinutes } from "./RoomMinutes.ts"
import { Rooms } from "./Rooms.ts"
import { RoomSocket } from "./RoomSocket.ts"
import { RoomsRepo } from "./RoomsRepo.ts"
import { WarRoomsEnabledLive, WarRoomsFlag } from "./WarRoomsFlag.ts"

const Repositories = Layer.mergeAll(
  RoomsRepo.layer,
  PushSubscriptionsRepo.layer,
  PushDeliveriesRepo.layer,
  ChatRepo.layer
)

const Foundations = Layer.mergeAll(
  RoomFeeds.layer,
  VapidKeys.layer,
  Inbox.layer,
  Blueprints.layer,
  Minutes.layer,
  WarRoomsFlag.layer
)
  .pipe(Layer.provideMerge(Repositories))

const Participation = Layer.mergeAll(
  PushQueue.layer,
  PushSubscriptions.layer,
  RoomAgents.layer,
  RoomMinutes.layer,
  PushDelivery.layer.pipe(Layer.provide(OutboundHttp.layer))
).pipe(Layer.provideMerge(Foundations))

/** The rooms' services, and the middleware of the `feature_war_rooms` flag. */
export const RoomsLive = Layer.mergeAll(WarRoomsEnabledLive, RoomSocket.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Rooms.layer, RoomChat.layer)),
  Layer.provideMerge(Participation)
)
