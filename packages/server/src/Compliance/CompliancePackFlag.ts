/**
 * The `feature_compliance_pack` flag, decided here for every compliance
 * endpoint (the domain's `CompliancePackEnabled` middleware): while it is off
 * the answer is 403 naming the flag, whatever the query — it is decoded only
 * after it.
 */
import { CompliancePackEnabled } from "@agent-platform/domain"
import { Effect, Layer } from "effect"
import { Compliance } from "./Compliance.ts"
import { gatedBy } from "./FeatureGate.ts"

/** The middleware, built on the `Compliance` service its handlers already use. */
export const CompliancePackEnabledLive = Layer.effect(
  CompliancePackEnabled,
  Effect.map(Compliance, (compliance) => CompliancePackEnabled.of(gatedBy(compliance.requireEnabled)))
)
