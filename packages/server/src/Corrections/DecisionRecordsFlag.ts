/**
 * The `feature_decision_records` flag, decided here for every corrections
 * endpoint (the domain's `DecisionRecordsEnabled` middleware): while it is
 * off the answer is 403 naming the flag, whatever the body or query — they
 * are decoded only after it.
 */
import { DecisionRecordsEnabled } from "@agent-platform/domain"
import { Effect, Layer } from "effect"
import { gatedBy } from "../Compliance/FeatureGate.ts"
import { Corrections } from "./Corrections.ts"

/** The middleware, built on the `Corrections` service its handlers already use. */
export const DecisionRecordsEnabledLive = Layer.effect(
  DecisionRecordsEnabled,
  Effect.map(
    Corrections,
    (corrections) => DecisionRecordsEnabled.of(gatedBy(corrections.requireEnabled))
  )
)
