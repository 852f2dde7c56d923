/**
 * The `feature_decision_records` tenant flag (spec: "Rules that hold
 * everywhere", 2; corrections rule 5): every corrections endpoint sits behind
 * it and answers 403 naming the flag while it is off, whatever its body or
 * query. Declared once here as a middleware of the corrections group; it runs
 * after the session is authenticated and before the request is decoded.
 */
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { FeatureDisabled } from "../Errors.ts"
import { type CurrentPrincipal } from "../Principal.ts"

export const flagName = "feature_decision_records"

export class DecisionRecordsEnabled extends HttpApiMiddleware.Service<
  DecisionRecordsEnabled,
  { requires: CurrentPrincipal }
>()("@agent-platform/domain/Corrections/DecisionRecordsEnabled", { error: FeatureDisabled }) {}
