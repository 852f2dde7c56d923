import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { AccessDenied, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { StorableString } from "../Text.ts"
import { Deleted } from "../Webhooks/Webhook.ts"
import { AdminAgent, AssignActions, CreateAgent, UpdateAgent } from "./AgentAdmin.ts"

const id = { id: Schema.String }

/**
 * Agent administration (`/api/admin/agents`): admins, and Space Admins for
 * their spaces — except assigning actions, which decides what the space's
 * keys may execute: admins only. To a Space Admin, an agent of another space does not exist
 * (404, as across tenants); naming another space of the tenant is a 403, an unknown one a 404.
 */
export class AgentsAdminApi extends HttpApiGroup.make("agentsAdmin")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: { space_id: Schema.optionalKey(StorableString) },
      success: Schema.Struct({ agents: Schema.Array(AdminAgent) }),
      error: [AccessDenied, NotImplemented]
    }).annotateMerge(doc(
      "List agents",
      "A Space Admin sees the agents of their spaces; filtering by a space of the tenant they do not administer is a 403 (an unknown space lists nothing, as for an administrator)."
    )),
    HttpApiEndpoint.post("create", "/", {
      payload: CreateAgent,
      success: AdminAgent.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, AccessDenied, NotFound, NotImplemented]
    }).annotateMerge(doc(
      "Create an agent",
      "One primary agent per space: a new primary unsets the old one. A Space Admin may create agents in their spaces only (403 for another space of the tenant); an unknown space (or another tenant's) is a 404 for everyone."
    )),
    HttpApiEndpoint.patch("update", "/:id", {
      params: id,
      payload: UpdateAgent,
      success: AdminAgent,
      error: [InvalidRequest, NotFound, NotImplemented]
    })
      .annotateMerge(
        doc(
          "Update an agent",
          "Fields absent from the body keep their value; making it primary unsets the space's previous primary."
        )
      ),
    HttpApiEndpoint.delete("delete", "/:id", { params: id, success: Deleted, error: [NotFound, NotImplemented] })
      .annotateMerge(doc("Delete an agent", "Also removes its knowledge files and action assignments."))
  )
  .annotateEndpoints(RequiredRole, "space_admin")
  .add(
    HttpApiEndpoint.put("assignActions", "/:id/actions", {
      params: id,
      payload: AssignActions,
      success: AdminAgent,
      error: [InvalidRequest, NotFound, NotImplemented]
    })
      .annotate(RequiredRole, "admin")
      .annotateMerge(
        doc(
          "Assign actions to an agent",
          "Administrators only: the actions of a space's agents are what its keys may execute (with the tenant's secrets in their headers), so a Space Admin, who manages the space's agents otherwise, gets 403. Replaces the agent's action set; unknown action ids are a 400."
        )
      )
  )
  .middleware(SessionAuth)
  .prefix("/api/admin/agents")
  .annotateMerge(OpenApi.annotations({
    title: "Administration",
    description:
      "Agents for administrators: create, edit and delete agents and assign their actions (a Space Admin manages only the agents of their spaces)."
  }))
{}
