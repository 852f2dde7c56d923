/**
 * The `feature_war_rooms` tenant flag (spec: "Rules that hold everywhere", 2):
 * every rooms, room-chat and blueprints endpoint sits behind it and answers
 * 403 naming the flag while it is off. Declared once here as a middleware of
 * those groups; runs after the session is authenticated.
 */
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { FeatureDisabled } from "../Errors.ts"
import { type CurrentPrincipal } from "../Principal.ts"

export const flagName = "feature_war_rooms"

export class WarRoomsEnabled extends HttpApiMiddleware.Service<WarRoomsEnabled, { requires: CurrentPrincipal }>()(
  "@agent-platform/domain/Rooms/WarRoomsEnabled",
  { error: FeatureDisabled }
) {}
