import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { Deleted } from "../Webhooks/Webhook.ts"
import { AdminAction, CreateAction, PutSecret, SecretInfo, SecretName, UpdateAction } from "./ActionAdmin.ts"

const id = { id: Schema.String }

/** Action catalog administration (`/api/admin/actions`, admin). */
export class ActionsAdminApi extends HttpApiGroup.make("actionsAdmin")
  .add(
    HttpApiEndpoint.get("list", "/actions", {
      success: Schema.Struct({ actions: Schema.Array(AdminAction) }),
      error: [NotImplemented]
    }).annotateMerge(doc("List actions", "Active and inactive.")),
    HttpApiEndpoint.post("create", "/actions", {
      payload: CreateAction,
      success: AdminAction.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(doc(
      "Create an action",
      "GET and DELETE send the params not used by URL placeholders as the query string; POST, PUT and PATCH as a JSON body."
    )),
    HttpApiEndpoint.patch("update", "/actions/:id", {
      params: id,
      payload: UpdateAction,
      success: AdminAction,
      error: [InvalidRequest, NotFound, NotImplemented]
    })
      .annotateMerge(
        doc(
          "Update an action",
          "Fields absent from the body keep their value; `is_active: true` reactivates a deleted action."
        )
      ),
    HttpApiEndpoint.delete("delete", "/actions/:id", {
      params: id,
      success: AdminAction,
      error: [NotFound, NotImplemented]
    })
      .annotateMerge(doc("Deactivate an action", "Soft delete: `is_active` becomes false; executions history stays.")),
    HttpApiEndpoint.get("listSecrets", "/secrets", {
      success: Schema.Struct({ secrets: Schema.Array(SecretInfo) }),
      error: [NotImplemented]
    }).annotateMerge(doc("List tenant secrets", "Names only; values are never returned.")),
    HttpApiEndpoint.put("putSecret", "/secrets/:name", {
      params: { name: SecretName },
      payload: PutSecret,
      success: SecretInfo,
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(
      doc("Set a tenant secret", "Stored encrypted (AES-256-GCM); reference it in action headers as `{{secret:NAME}}`.")
    ),
    HttpApiEndpoint.delete("deleteSecret", "/secrets/:name", {
      params: { name: SecretName },
      success: Deleted,
      error: [InvalidRequest, NotFound, NotImplemented]
    })
      .annotateMerge(
        doc("Delete a tenant secret", "Actions whose headers still reference it fail until it is set again.")
      )
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({
    title: "Administration",
    description:
      "The actions catalog for administrators: actions, their parameters and the tenant secrets their headers use (session, admin)."
  }))
{}
