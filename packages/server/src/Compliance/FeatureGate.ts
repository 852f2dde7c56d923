/**
 * The tenant feature flags that gate whole features (spec: "When the flag is
 * off, the affected endpoints answer 403"), checked in one place.
 */
import { CurrentPrincipal, Errors } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import { Tenants } from "../Tenants/Tenants.ts"

export type GatedFeature = "feature_compliance_pack" | "feature_decision_records"

const names: Record<GatedFeature, string> = {
  feature_compliance_pack: "The compliance pack",
  feature_decision_records: "The decision records feature (corrections)"
}

export class FeatureGate extends Context.Service<FeatureGate, {
  /** Succeeds when the tenant has the feature on; else 403 `FeatureDisabled` naming the flag. */
  readonly require: (tenantId: string, feature: GatedFeature) => Effect.Effect<void, Errors.FeatureDisabled>
}>()("@agent-platform/server/Compliance/FeatureGate") {
  static readonly layer = Layer.effect(
    FeatureGate,
    Effect.gen(function*() {
      const tenants = yield* Tenants
      return FeatureGate.of({
        require: (tenantId, feature) =>
          Effect.flatMap(Effect.orDie(tenants.flags(tenantId)), (flags) =>
            flags !== undefined && flags[feature]
              ? Effect.void
              : Effect.fail(
                new Errors.FeatureDisabled({
                  error: `${
                    names[feature]
                  } is off for this tenant: an administrator can turn it on with PUT /api/admin/tenant/flags {"${feature}": true}.`
                })
              ))
      })
    })
  )
}

/**
 * The body of a flag's middleware: the request runs once `require` passes
 * for the signed-in principal's tenant (else its 403), before the request is
 * decoded.
 */
export const gatedBy =
  (require: (tenantId: string) => Effect.Effect<void, Errors.FeatureDisabled>) =>
  <A, E, R>(httpEffect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      yield* require(principal.tenantId)
      return yield* httpEffect
    })
