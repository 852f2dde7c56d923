import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { AccessDenied, Conflict, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"

export const SpaceAdminAssignment = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  space_id: Schema.String,
  space_code: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "SpaceAdminAssignment" })

export const AssignSpaceAdmin = Schema.Struct({ user_id: Schema.String, space_id: Schema.String })

/** Space Admin assignments (`/api/space-admin/assignments`, admin). */
export class SpaceAdminApi extends HttpApiGroup.make("spaceAdmin")
  .add(
    HttpApiEndpoint.get("list", "/assignments", {
      success: Schema.Struct({ assignments: Schema.Array(SpaceAdminAssignment) }),
      error: [NotImplemented]
    }).annotateMerge(doc("List Space Admin assignments", "Which users administer which spaces.")),
    HttpApiEndpoint.post("assign", "/assignments", {
      payload: AssignSpaceAdmin,
      success: SpaceAdminAssignment,
      error: [InvalidRequest, NotFound, AccessDenied, Conflict, NotImplemented]
    }).annotateMerge(
      doc(
        "Make a user Space Admin of a space",
        "An r_user gets role r_space_admin (administrators keep theirs) and administers that space's agents only. Idempotent. 409 for a Security Officer: a user holds one role, so change theirs to r_space_admin first (`PATCH /api/admin/users/{id}`). 404 for an unknown user or space."
      )
    )
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/space-admin")
  .annotateMerge(OpenApi.annotations({
    title: "Space Admin",
    description: "Which users administer which spaces (Space Admins), over a signed-in session."
  }))
{}
