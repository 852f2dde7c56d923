import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { FeatureDisabled, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { Blueprint, CreateBlueprint, SeedDefaults, SeededDefaults } from "./Blueprint.ts"

const errors = [InvalidRequest, FeatureDisabled, NotFound, NotImplemented] as const

/** Room blueprints (`/api/room-blueprints`). */
export class BlueprintsApi extends HttpApiGroup.make("blueprints")
  .add(
    HttpApiEndpoint.get("list", "/", { success: Schema.Array(Blueprint), error: errors })
      .annotateMerge(doc("List the tenant's blueprints")),
    HttpApiEndpoint.post("create", "/", { payload: CreateBlueprint, success: Blueprint.pipe(HttpApiSchema.status(201)), error: errors })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc("Create a blueprint")),
    HttpApiEndpoint.post("seedDefaults", "/seed-defaults", {
      payload: SeedDefaults,
      success: SeededDefaults.pipe(HttpApiSchema.status(201)),
      error: errors
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(doc("Seed default blueprints", "Idempotent: a persistent and an ephemeral blueprint and the always-on summary and decisions agents of the space."))
  )
  .middleware(SessionAuth)
  .prefix("/api/room-blueprints")
  .annotateMerge(OpenApi.annotations({ title: "Rooms" }))
{}
