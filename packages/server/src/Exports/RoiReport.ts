/**
 * The ROI report as a self-contained printable page: inline CSS (with print
 * rules), inline SVG charts, no script and no external asset — it prints,
 * and it can be archived or mailed as one file. Every text from the database
 * is HTML-escaped.
 */
import type { Compliance, Exports } from "@agent-platform/domain"
import type { RoiFigures } from "./ExportsRepo.ts"
import type { Period } from "./Period.ts"

export interface RoiReport {
  readonly tenantName: string
  readonly period: Period
  readonly settings: Exports.RoiSettings
  readonly figures: RoiFigures
  readonly generatedAt: Date
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const number = (value: number, digits = 0) =>
  value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

const classes: ReadonlyArray<{ readonly key: Compliance.Supervision; readonly label: string; readonly color: string }> =
  [
    { key: "human_confirmed", label: "Human confirmed", color: "#2e7d32" },
    { key: "human_triggered_auto", label: "Human triggered, automatic", color: "#1565c0" },
    { key: "autonomous", label: "Autonomous", color: "#6a1b9a" },
    { key: "shadow", label: "Shadow (not sent)", color: "#9e9e9e" }
  ]

/** Horizontal bars, one per supervision class. */
const supervisionChart = (figures: RoiFigures) => {
  const rows = classes.map((c) => {
    const found = figures.actions.find((a) => a.supervision === c.key)
    return { ...c, value: (found?.succeeded ?? 0) + (found?.failed ?? 0) }
  })
  const max = Math.max(1, ...rows.map((r) => r.value))
  const width = 640
  const bar = 28
  const height = rows.length * (bar + 12) + 8
  const bars = rows.map((r, i) => {
    const y = 8 + i * (bar + 12)
    const w = Math.round((r.value / max) * 360)
    return `<text x="0" y="${y + 19}" font-size="13">${escapeHtml(r.label)}</text>` +
      `<rect x="210" y="${y}" width="${w}" height="${bar}" fill="${r.color}"><title>${r.value}</title></rect>` +
      `<text x="${216 + w}" y="${y + 19}" font-size="13">${number(r.value)}</text>`
  }).join("")
  return `<svg class="chart" id="chart-supervision" role="img" aria-label="Actions per supervision class" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${bars}</svg>`
}

/** Grouped columns per week: messages answered and actions run. */
const trendChart = (figures: RoiFigures) => {
  const weeks = figures.weeks
  const width = 640
  const height = 240
  const plot = { left: 40, top: 10, bottom: 40, width: width - 50 }
  const max = Math.max(1, ...weeks.flatMap((w) => [w.messages, w.actions]))
  const slot = weeks.length === 0 ? plot.width : plot.width / weeks.length
  const barWidth = Math.max(2, Math.min(24, slot / 2 - 4))
  const scale = (value: number) => ((height - plot.top - plot.bottom) * value) / max
  const base = height - plot.bottom
  const columns = weeks.map((w, i) => {
    const x = plot.left + i * slot + slot / 2
    const hm = scale(w.messages)
    const ha = scale(w.actions)
    return `<rect x="${(x - barWidth).toFixed(1)}" y="${(base - hm).toFixed(1)}" width="${
      barWidth.toFixed(1)
    }" height="${hm.toFixed(1)}" fill="#1565c0"><title>${w.week}: ${w.messages} messages</title></rect>` +
      `<rect x="${x.toFixed(1)}" y="${(base - ha).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${
        ha.toFixed(1)
      }" fill="#ef6c00"><title>${w.week}: ${w.actions} actions</title></rect>` +
      `<text x="${x.toFixed(1)}" y="${base + 16}" font-size="11" text-anchor="middle">${
        escapeHtml(w.week.slice(5))
      }</text>`
  }).join("")
  const axis = `<line x1="${plot.left}" y1="${base}" x2="${width - 10}" y2="${base}" stroke="#555"/>` +
    `<text x="${plot.left - 6}" y="${plot.top + 10}" font-size="11" text-anchor="end">${number(max)}</text>` +
    `<text x="${plot.left - 6}" y="${base}" font-size="11" text-anchor="end">0</text>`
  const legend =
    `<rect x="${plot.left}" y="${height - 14}" width="10" height="10" fill="#1565c0"/><text x="${plot.left + 14}" y="${
      height - 5
    }" font-size="11">messages answered</text>` +
    `<rect x="${plot.left + 150}" y="${height - 14}" width="10" height="10" fill="#ef6c00"/><text x="${
      plot.left + 164
    }" y="${height - 5}" font-size="11">actions run</text>`
  return `<svg class="chart" id="chart-trend" role="img" aria-label="Messages answered and actions run per week" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${axis}${columns}${legend}</svg>`
}

const table = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  rows.length === 0
    ? `<p class="empty">No activity in the period.</p>`
    : `<table><thead><tr>${headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>${
      rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")
    }</tbody></table>`

const style = `
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 2rem auto; max-width: 48rem; padding: 0 1rem; }
  h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
  .meta { color: #666; } .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: .8rem; margin-top: 1rem; }
  .card { border: 1px solid #ddd; border-radius: 6px; padding: .7rem; } .card b { display: block; font-size: 1.5rem; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #eee; }
  td:last-child, th:last-child { text-align: right; } .chart { max-width: 100%; height: auto; } .note { color: #666; font-size: 12px; }
  @page { size: A4; margin: 15mm; }
  @media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } .card, svg, table { break-inside: avoid; } }`

/** The page. */
export const renderRoiReport = ({ figures, generatedAt, period, settings, tenantName }: RoiReport): string => {
  const succeeded = figures.actions.filter((a) => a.supervision !== "shadow").reduce((n, a) => n + a.succeeded, 0)
  const totalActions = figures.actions.reduce((n, a) => n + a.succeeded + a.failed, 0)
  const hoursSaved =
    (figures.messagesAnswered * settings.minutes_saved_per_message + succeeded * settings.minutes_saved_per_action) / 60
  const cost = settings.token_cost_per_1k === null ? null : (figures.tokens / 1000) * settings.token_cost_per_1k
  const cards = [
    ["Messages answered", number(figures.messagesAnswered)],
    ["Actions run", number(totalActions)],
    ["Estimated hours saved", number(hoursSaved, 1)],
    ["Tokens used", number(figures.tokens)],
    ...(cost === null ? [] : [["Token cost", number(cost, 2)]])
  ].map(([label, value]) => `<div class="card">${escapeHtml(label)}<b>${escapeHtml(value)}</b></div>`).join("")
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ROI report — ${escapeHtml(tenantName)} — ${period.from} to ${period.to}</title>
<style>${style}</style>
</head>
<body>
<h1>Return on investment</h1>
<p class="meta">${
    escapeHtml(tenantName)
  } · ${period.from} to ${period.to} (${period.days} days, UTC) · generated ${generatedAt.toISOString()}</p>
<section class="cards">${cards}</section>
<p class="note">Hours saved assume ${number(settings.minutes_saved_per_message, 1)} minutes per message answered and ${
    number(settings.minutes_saved_per_action, 1)
  } minutes per successful action (shadow runs excluded)${
    cost === null
      ? "; set token_cost_per_1k to include the token cost"
      : `; tokens cost ${number(settings.token_cost_per_1k ?? 0, 4)} per 1,000`
  }.</p>
<h2>Actions automated, by supervision</h2>
${supervisionChart(figures)}
<h2>Trend per week</h2>
${trendChart(figures)}
<h2>Top agents</h2>
${table(["Agent", "Messages answered"], figures.topAgents.map((a) => [a.name, number(a.messages)]))}
<h2>Top actions</h2>
${
    table(
      ["Action", "Succeeded", "Executions"],
      figures.topActions.map((a) => [a.name, number(a.succeeded), number(a.executions)])
    )
  }
</body>
</html>
`
}
