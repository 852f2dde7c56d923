import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { AccessDenied, Conflict, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { roleModelTable } from "../Principal.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import {
  AdminUser,
  CreateSpace,
  CreateTenant,
  CreateUser,
  Space,
  Tenant,
  TenantFlags,
  UpdateTenantFlags,
  UpdateUser
} from "./Admin.ts"

/** Users, spaces, tenant flags and tenants (`/api/admin`, admin). */
export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createUser", "/users", {
      payload: CreateUser,
      success: AdminUser.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, Conflict, AccessDenied, NotImplemented]
    }).annotateMerge(doc(
      "Create a user",
      `400 names the password-policy rules the password breaks; 409 when the email is taken in this tenant; 403 when your role may not grant \`role_id\`. Who may grant which role:\n\n${roleModelTable}`
    )),
    HttpApiEndpoint.get("listUsers", "/users", {
      success: Schema.Struct({ users: Schema.Array(AdminUser) }),
      error: [NotImplemented]
    }).annotateMerge(
      doc(
        "List users",
        "The tenant's users with their role, status (active, blocked, password change due, TOTP) and last sign-in."
      )
    ),
    HttpApiEndpoint.patch("updateUser", "/users/:id", {
      params: { id: Schema.String },
      payload: UpdateUser,
      success: AdminUser,
      error: [InvalidRequest, NotFound, AccessDenied, NotImplemented]
    }).annotateMerge(doc(
      "Update a user",
      `Deactivating, blocking or demoting a user ends their sessions and stops their API keys at once; \`blocked: false\` also clears a lockout. 403 when your role may not grant the new \`role_id\`, or may not change a user holding their current role; 400 for changes to your own role or state. Who may grant which role:\n\n${roleModelTable}`
    )),
    HttpApiEndpoint.post("createSpace", "/spaces", {
      payload: CreateSpace,
      success: Space.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, Conflict, NotImplemented]
    }).annotateMerge(doc("Create a space", "409 when the code is taken.")),
    HttpApiEndpoint.get("listSpaces", "/spaces", {
      success: Schema.Struct({ spaces: Schema.Array(Space) }),
      error: [NotImplemented]
    }).annotateMerge(doc("List spaces", "The tenant's spaces (agent groups) with their codes.")),
    HttpApiEndpoint.get("getFlags", "/tenant/flags", { success: TenantFlags, error: [NotImplemented] })
      .annotateMerge(doc("Tenant feature flags", "Defaults: push_notifications on, the others off.")),
    HttpApiEndpoint.put("updateFlags", "/tenant/flags", {
      payload: UpdateTenantFlags,
      success: TenantFlags,
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(
      doc("Set tenant feature flags", "Flags absent from the body keep their value; answers every flag.")
    )
  )
  .annotateEndpoints(RequiredRole, "admin")
  .add(
    HttpApiEndpoint.post("createTenant", "/tenants", {
      payload: CreateTenant,
      success: Tenant.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, Conflict, NotImplemented]
    })
      .annotate(RequiredRole, "platform_superadmin")
      .annotateMerge(doc(
        "Create a tenant",
        `With its first administrator (r_admin). Only the r_superadmin of the platform tenant (the one created at first start) creates tenants; anyone else gets 403. Who may grant which role:\n\n${roleModelTable}`
      ))
  )
  .middleware(SessionAuth)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({
    title: "Administration",
    description: "Tenant administration over a signed-in session: users, spaces, tenant feature flags and tenants."
  }))
{}
