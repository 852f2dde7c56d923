/**
 * Periods of whole UTC days, as the exports, the compliance reports and the
 * adoption metrics take them: `from` and `to` are dates (YYYY-MM-DD), both
 * included; in SQL a period is the half-open range [start, end).
 */
import { Errors } from "@agent-platform/domain"
import { Effect } from "effect"

export interface Period {
  /** First day, YYYY-MM-DD. */
  readonly from: string
  /** Last day (included), YYYY-MM-DD. */
  readonly to: string
  /** The first instant of `from`. */
  readonly start: Date
  /** The first instant after `to`. */
  readonly end: Date
  readonly days: number
}

const dayMs = 86_400_000

export const isoDay = (date: Date): string => date.toISOString().slice(0, 10)

const startOf = (day: string) => new Date(`${day}T00:00:00.000Z`)

const make = (from: string, to: string): Period => {
  const start = startOf(from)
  const end = new Date(startOf(to).getTime() + dayMs)
  return { from, to, start, end, days: Math.round((end.getTime() - start.getTime()) / dayMs) }
}

/** The last `days` days, today (UTC) included. */
export const lastDays = (days: number, now: Date = new Date()): Period => {
  const to = isoDay(now)
  return make(isoDay(new Date(startOf(to).getTime() - (days - 1) * dayMs)), to)
}

/** `from`/`to` as given (already checked to be dates), defaulting to the last 30 days; 400 when `from` is after `to`. */
export const between = (
  from: string | undefined,
  to: string | undefined,
  now: Date = new Date()
): Effect.Effect<Period, Errors.InvalidRequest> => {
  const last = to ?? isoDay(now)
  const first = from ?? isoDay(new Date(startOf(last).getTime() - 30 * dayMs))
  return first > last
    ? Effect.fail(new Errors.InvalidRequest({ error: `from (${first}) is after to (${last})` }))
    : Effect.succeed(make(first, last))
}

/** Every day of the period, in order. */
export const daysOf = (period: Period): Array<string> =>
  Array.from({ length: period.days }, (_, i) => isoDay(new Date(period.start.getTime() + i * dayMs)))
