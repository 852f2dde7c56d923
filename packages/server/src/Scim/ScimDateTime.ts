/**
 * SCIM's `dateTime` (RFC 7643 §2.3.5): an xsd:dateTime, such as
 * `2024-01-02T03:04:05Z`, read strictly — `Date.parse` would take `"1"`,
 * `"-1"` or `"Tuesday 5"` for dates. Accepted: `YYYY-MM-DDThh:mm:ss`, an
 * optional fraction (`.5`, `.123456`: kept to the millisecond) and an optional
 * offset (`Z`, `+02:00`); without one the time is UTC. A date alone
 * (`2024-01-02`) is an xsd:date, not a dateTime: refused, as the RFC asks.
 */

const dateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
/** The days of a month (1-12): day 0 of the next month of a year as leap as `year` (2000 is, 2001 is not). */
const daysIn = (year: number, month: number) => new Date(Date.UTC(isLeap(year) ? 2000 : 2001, month, 0)).getUTCDate()

/** The instant an xsd:dateTime names, or undefined when the text is not one. */
export const parseDateTime = (text: string): Date | undefined => {
  const match = dateTime.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number)
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const offset = match[8]
  let offsetMinutes = 0
  if (offset !== undefined && offset !== "Z") {
    const hours = Number(offset.slice(1, 3))
    const minutes = Number(offset.slice(4, 6))
    if (hours > 14 || minutes > 59 || (hours === 14 && minutes > 0)) return undefined
    offsetMinutes = (offset[0] === "-" ? -1 : 1) * (hours * 60 + minutes)
  }
  const millis = Number((match[7] ?? "").padEnd(3, "0").slice(0, 3))
  const at = new Date(0)
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0-99 as 1900-1999.
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute - offsetMinutes, second, millis)
  return at
}
