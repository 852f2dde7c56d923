/** Adoption metrics (GET /api/audit/adoption): active users, messages and actions per day, in total and per space. */
import type { Audit } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { daysOf, lastDays } from "../Exports/Period.ts"
import { AdoptionRepo } from "./AdoptionRepo.ts"

export const defaultAdoptionDays = 30

export class Adoption extends Context.Service<Adoption, {
  /** The last `days` UTC days, today included; every day listed, zeros included. */
  readonly report: (tenantId: string, days: number) => Effect.Effect<Audit.Adoption, SqlError>
}>()("@agent-platform/server/Audit/Adoption") {
  static readonly layer = Layer.effect(
    Adoption,
    Effect.gen(function*() {
      const repo = yield* AdoptionRepo
      const report = Effect.fn("Adoption.report")(function*(tenantId: string, days: number) {
        const period = lastDays(days)
        const activity = yield* repo.activity(tenantId, period.start, period.end)
        const byDay = new Map(activity.daily.map((day) => [day.date, day]))
        return {
          days,
          from: period.from,
          to: period.to,
          daily: daysOf(period).map((date) => {
            const day = byDay.get(date)
            return {
              date,
              active_users: day?.active_users ?? 0,
              messages: day?.messages ?? 0,
              actions: day?.actions ?? 0
            }
          }),
          totals: activity.totals,
          by_space: activity.bySpace
        } satisfies Audit.Adoption
      })
      return Adoption.of({ report })
    })
  ).pipe(Layer.provide(AdoptionRepo.layer))
}
