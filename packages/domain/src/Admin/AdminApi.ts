import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { doc } from "../Doc.ts"
import { Conflict, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
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
      error: [InvalidRequest, Conflict, NotImplemented]
    }).annotateMerge(doc("Create a user", "400 names the password-policy rules the password breaks; 409 when the email is taken.")),
    HttpApiEndpoint.get("listUsers", "/users", {
      success: Schema.Struct({ users: Schema.Array(AdminUser) }),
      error: [NotImplemented]
    }).annotateMerge(doc("List users")),
    HttpApiEndpoint.patch("updateUser", "/users/:id", {
      params: { id: Schema.String },
      payload: UpdateUser,
      success: AdminUser,
      error: [InvalidRequest, NotFound, NotImplemented]
    }).annotateMerge(doc("Update a user", "Deactivating a user or changing their role ends their sessions; `blocked: false` also clears a lockout.")),
    HttpApiEndpoint.post("createSpace", "/spaces", {
      payload: CreateSpace,
      success: Space.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, Conflict, NotImplemented]
    }).annotateMerge(doc("Create a space", "409 when the code is taken.")),
    HttpApiEndpoint.get("listSpaces", "/spaces", {
      success: Schema.Struct({ spaces: Schema.Array(Space) }),
      error: [NotImplemented]
    }).annotateMerge(doc("List spaces")),
    HttpApiEndpoint.get("getFlags", "/tenant/flags", { success: TenantFlags, error: [NotImplemented] })
      .annotateMerge(doc("Tenant feature flags", "Defaults: push_notifications on, the others off.")),
    HttpApiEndpoint.put("updateFlags", "/tenant/flags", {
      payload: UpdateTenantFlags,
      success: TenantFlags,
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(doc("Set tenant feature flags"))
  )
  .annotateEndpoints(RequiredRole, "admin")
  .add(
    HttpApiEndpoint.post("createTenant", "/tenants", {
      payload: CreateTenant,
      success: Tenant.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, Conflict, NotImplemented]
    })
      .annotate(RequiredRole, "superadmin")
      .annotateMerge(doc("Create a tenant", "With its first administrator (r_admin). r_superadmin only."))
  )
  .middleware(SessionAuth)
  .prefix("/api/admin")
  .annotateMerge(OpenApi.annotations({ title: "Administration" }))
{}
