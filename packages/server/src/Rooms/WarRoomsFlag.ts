/**
 * The `feature_war_rooms` flag, decided here for every rooms, room-chat and
 * blueprints endpoint (the domain's `WarRoomsEnabled` middleware) and for
 * open WebSockets, which check it again while they live.
 */
import { Errors, WarRoomsEnabled } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import { gatedBy } from "../Compliance/FeatureGate.ts"
import { Tenants } from "../Tenants/Tenants.ts"

export const flagDisabled = () =>
  new Errors.FeatureDisabled({
    error:
      "Work rooms are off for this tenant (flag feature_war_rooms): an administrator can turn it on with PUT /api/admin/tenant/flags."
  })

export class WarRoomsFlag extends Context.Service<WarRoomsFlag, {
  readonly isEnabled: (tenantId: string) => Effect.Effect<boolean>
}>()("@agent-platform/server/Rooms/WarRoomsFlag") {
  static readonly layer = Layer.effect(
    WarRoomsFlag,
    Effect.gen(function*() {
      const tenants = yield* Tenants
      return WarRoomsFlag.of({
        isEnabled: (tenantId) =>
          Effect.map(Effect.orDie(tenants.flags(tenantId)), (flags) => flags?.feature_war_rooms === true)
      })
    })
  )
}

/** The middleware: 403 naming the flag while it is off. */
export const WarRoomsEnabledLive = Layer.effect(
  WarRoomsEnabled,
  Effect.map(
    WarRoomsFlag,
    (flag) =>
      WarRoomsEnabled.of(
        gatedBy((tenantId) =>
          Effect.flatMap(flag.isEnabled(tenantId), (on) => (on ? Effect.void : Effect.fail(flagDisabled())))
        )
      )
  )
)
