import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc, openBody } from "../Doc.ts"
import { InvalidRequest, NotFound } from "../Errors.ts"
import { WarRoomsEnabled } from "../Rooms/WarRooms.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { Blueprint, BlueprintList, CreateBlueprint, SeedDefaults, SeededDefaults } from "./Blueprint.ts"

const flagNote = "Behind the tenant flag `feature_war_rooms`: 403 `FeatureDisabled` while it is off."

/** Room blueprints (`/api/room-blueprints`), behind the `feature_war_rooms` flag. */
export class BlueprintsApi extends HttpApiGroup.make("blueprints")
  .add(
    HttpApiEndpoint.get("list", "/", { success: BlueprintList })
      .annotateMerge(doc("List the tenant's blueprints", `Oldest first. ${flagNote}`)),
    HttpApiEndpoint.post("create", "/", {
      payload: openBody(CreateBlueprint),
      success: Blueprint.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotFound]
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc(
        "Create a blueprint",
        `Administrators. The agents must belong to the blueprint's space (400 naming the others) and be listed once each (400 naming a repeated one); a \`name\` that is only white space is 400. 404 for an unknown space. ${flagNote}`
      )),
    HttpApiEndpoint.post("seedDefaults", "/seed-defaults", {
      payload: openBody(SeedDefaults),
      success: SeededDefaults.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotFound]
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc(
        "Seed the default blueprints of a space",
        `Administrators. Creates the space's always-on \`Summary\` and \`Decisions\` agents (they write the minutes) and two blueprints using them: a persistent one and an ephemeral one. Idempotent, also under concurrent calls: a repeat answers the same ids and creates nothing. 404 for an unknown space. ${flagNote}`
      ))
  )
  .middleware(WarRoomsEnabled)
  .middleware(SessionAuth)
  .prefix("/api/room-blueprints")
  .annotateMerge(OpenApi.annotations({
    title: "Rooms",
    description:
      "Work rooms: people and agents in one live conversation around one piece of work (found or created by an external reference), its participants, invitations, poll and WebSocket frames, minutes at close, and the blueprints rooms are made from. Behind the tenant flag `feature_war_rooms`."
  }))
{}
