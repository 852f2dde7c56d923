/**
 * The `feature_decision_records` flag, decided here for every corrections
 * endpoint (the domain's `DecisionRecordsEnabled` middleware): while it is
 * off the answer is 403 naming the flag, whatever the body or query — they
 * are decoded only after it.
 */
import { Corrections as Domain, CurrentPrincipal } from "@agent-platform/domain"
import { Effect, Layer } from "effect"
import { Corrections } from "./Corrections.ts"

/** The middleware, built on the `Corrections` service its handlers already use. */
export const DecisionRecordsEnabledLive = Layer.effect(
  Domain.DecisionRecordsEnabled,
  Effect.gen(function*() {
    const corrections = yield* Corrections
    return Domain.DecisionRecordsEnabled.of((httpEffect) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        yield* corrections.requireEnabled(principal.tenantId)
        return yield* httpEffect
      })
    )
  })
)
