/**
 * The `feature_compliance_pack` tenant flag: every compliance endpoint sits
 * behind it and answers 403 naming the flag while it is off (spec: "403 flag
 * off or role missing"), whatever its query. Declared once here as a
 * middleware of the compliance group; it runs after the session and the
 * Security Officer role are checked and before the query is decoded.
 */
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { FeatureDisabled } from "../Errors.ts"
import { type CurrentPrincipal } from "../Principal.ts"

export class CompliancePackEnabled extends HttpApiMiddleware.Service<
  CompliancePackEnabled,
  { requires: CurrentPrincipal }
>()("@agent-platform/domain/Compliance/CompliancePackEnabled", { error: FeatureDisabled }) {}
