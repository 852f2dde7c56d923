import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { Conflict, InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { RequiredRole, SessionAuth } from "../Security.ts"
import { Deleted } from "../Webhooks/Webhook.ts"
import { CreateIpRule, IpRule, IpRuleList, PasswordPolicy } from "./SecurityPolicy.ts"

/** Security policies (`/api/security`, admin). */
export class SecurityPoliciesApi extends HttpApiGroup.make("security")
  .add(
    HttpApiEndpoint.get("listIpRules", "/ip-allowlist", { success: IpRuleList, error: [NotImplemented] })
      .annotateMerge(doc("IP allowlist", "No rules = every address allowed.")),
    HttpApiEndpoint.post("createIpRule", "/ip-allowlist", {
      payload: CreateIpRule,
      success: IpRule.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequest, Conflict, NotImplemented]
    }).annotateMerge(
      doc(
        "Add an allowlist rule",
        "409 when the rule set would lock out the caller's own current IP, unless `force` is true."
      )
    ),
    HttpApiEndpoint.delete("deleteIpRule", "/ip-allowlist/:id", {
      params: { id: Schema.String },
      query: {
        force: Schema.optionalKey(Schema.Literals(["true", "false"])).annotate({
          description: "`true` removes the rule even though the caller's current IP would be locked out"
        })
      },
      success: Deleted,
      error: [NotFound, Conflict, NotImplemented]
    }).annotateMerge(doc(
      "Remove an allowlist rule",
      "409 when the rules left would lock out the caller's own current IP, unless `?force=true` (removing the last rule allows every address). An operator locked out of a tenant recovers with `agent-platform security reset-allowlist --tenant <name or id>` on the database."
    )),
    HttpApiEndpoint.get("getPasswordPolicy", "/password-policy", { success: PasswordPolicy, error: [NotImplemented] })
      .annotateMerge(
        doc("Password policy", "The rules new passwords must follow and how long a password stays valid.")
      ),
    HttpApiEndpoint.put("updatePasswordPolicy", "/password-policy", {
      payload: PasswordPolicy,
      success: PasswordPolicy,
      error: [InvalidRequest, NotImplemented]
    }).annotateMerge(doc("Replace the password policy", "Enforced on every password set from now on."))
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(SessionAuth)
  .prefix("/api/security")
  .annotateMerge(OpenApi.annotations({
    title: "Security policies",
    description: "The tenant's IP allowlist and password policy (session, security officer)."
  }))
{}
