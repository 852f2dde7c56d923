import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { RoleMappings } from "./Scim.ts"

/** Which SCIM groups grant which roles (`/api/admin/scim`, admin). */
export class ScimRoleMappingsApi extends HttpApiGroup.make("scimRoleMappings")
  .add(
    HttpApiEndpoint.get("get", "/role-mappings", { success: RoleMappings })
      .annotateMerge(doc("SCIM role mappings", "The group-to-role rules applied to users provisioned through SCIM.")),
    HttpApiEndpoint.put("put", "/role-mappings", {
      payload: RoleMappings,
      success: RoleMappings,
      error: [InvalidRequest]
    }).annotateMerge(doc(
      "Set the SCIM role mappings",
      "Replaces the whole list and applies it at once to every user provisioned through SCIM; from then on it is applied on every membership change. A user in several mapped groups gets the strongest role (r_admin, then r_security_officer, then r_space_admin); without a mapped group, r_user. Group names compare case-insensitively. r_superadmin cannot be granted (400), nor can one group be mapped twice (400). A user whose role changes has their sessions ended. Users created on the admin surface keep the role given there."
    ))
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/admin/scim")
  .annotateMerge(OpenApi.annotations({
    title: "SCIM role mappings",
    description:
      "Which SCIM group grants which role to the users provisioned through SCIM, applied on every membership change (administrators)."
  }))
{}
