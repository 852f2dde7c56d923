/** Data exports: CSV and HTML bodies, date ranges and the ROI report's tenant settings. */
import { Schema } from "effect"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"

/** A CSV download (RFC 4180, CRLF line ends, a header row). */
export const Csv = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv" }))

/** An HTML page. */
export const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

/** A calendar date, YYYY-MM-DD (a UTC day); impossible dates such as 2025-02-30 are refused. */
export const IsoDate = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date YYYY-MM-DD" }),
  Schema.makeFilter((value: string) => {
    const date = new Date(`${value}T00:00:00Z`)
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value)
      ? undefined
      : `${value} is not a calendar date`
  })
)

/** `from` and `to`, both included. */
export const DateRange = {
  from: Schema.optionalKey(IsoDate).annotate({ description: "First UTC day, YYYY-MM-DD; default 30 days back" }),
  to: Schema.optionalKey(IsoDate).annotate({ description: "Last UTC day (included), YYYY-MM-DD; default today" })
}

// Finite: a JSON number (a plain `Number` would also take the strings "NaN" and "Infinity", and say so to a typo).
const Minutes = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(1440))

/** What the ROI report assumes a message and an action save, and what tokens cost. */
export const RoiSettings = Schema.Struct({
  minutes_saved_per_message: Minutes.annotate({
    description: "Minutes a person saves per message an agent answers; default 2"
  }),
  minutes_saved_per_action: Minutes.annotate({
    description: "Minutes a person saves per action run for them (shadow runs excluded); default 5"
  }),
  token_cost_per_1k: Schema.NullOr(
    Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(1000))
  ).annotate({
    description:
      "Cost of 1,000 tokens (input and output) in the tenant's currency; null leaves the cost out of the report"
  })
}).annotate({ identifier: "RoiSettings" })
export type RoiSettings = typeof RoiSettings.Type

export const UpdateRoiSettings = Schema.Struct({
  minutes_saved_per_message: Schema.optionalKey(Minutes),
  minutes_saved_per_action: Schema.optionalKey(Minutes),
  token_cost_per_1k: Schema.optionalKey(RoiSettings.fields.token_cost_per_1k)
})
