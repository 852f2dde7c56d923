/**
 * Loaded into the service by bench/memory.ts (`node --import`): every
 * MEMORY_PROBE_MS (default 500) it appends one JSON line to MEMORY_PROBE_FILE
 * with where the resident set goes — process.memoryUsage() and V8's heap
 * spaces — so the bench can say which part grows. It reads, it changes
 * nothing, and its timer does not keep the process alive.
 */
import { appendFileSync } from "node:fs"
import { setInterval } from "node:timers"
import { getHeapSpaceStatistics } from "node:v8"

const file = process.env.MEMORY_PROBE_FILE
const everyMs = Number(process.env.MEMORY_PROBE_MS ?? 500)
const mib = (bytes) => Math.round(bytes / 10485.76) / 100

if (file !== undefined && file !== "") {
  const spaces = () =>
    Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, mib(space.space_size)]))
  setInterval(() => {
    const usage = process.memoryUsage()
    appendFileSync(
      file,
      `${
        JSON.stringify({
          at: Date.now(),
          rss: mib(usage.rss),
          heapTotal: mib(usage.heapTotal),
          heapUsed: mib(usage.heapUsed),
          external: mib(usage.external),
          arrayBuffers: mib(usage.arrayBuffers),
          spaces: spaces()
        })
      }\n`
    )
  }, everyMs).unref()
}
