/**
 * Summarises a V8 CPU profile (`node --cpu-prof`) of the service: self time
 * per package (and per folder of our own code) and per function, mapped back
 * from the bundle to the original sources through its source map.
 *
 *   node --import tsx bench/ProfileSummary.ts <file.cpuprofile> [requests]
 *
 * With `requests` (how many the profiled run answered) the times are also
 * given per request, in microseconds.
 */
import { readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  /** When the profile started, in µs of the monotonic clock (the one `process.hrtime` reads). */
  readonly startTime: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface Row {
  readonly name: string
  readonly ms: number
  readonly share: number
}

export interface Summary {
  /** Busy time: every sample but `(idle)`. */
  readonly busyMs: number
  readonly packages: ReadonlyArray<Row>
  readonly functions: ReadonlyArray<Row>
}

const maps = new Map<string, SourceMap | undefined>()

/** The source map of a bundle file (`<file>.map`), when there is one. */
const sourceMapOf = (url: string): SourceMap | undefined => {
  if (!maps.has(url)) {
    try {
      const path = url.startsWith("file://") ? fileURLToPath(url) : url
      maps.set(url, new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8"))))
    } catch {
      maps.set(url, undefined)
    }
  }
  return maps.get(url)
}

/** Where a frame's code came from: its original file and line. */
export const originalOf = (
  frame: CallFrame
): { readonly file: string; readonly line: number; readonly name: string } => {
  // Only the service's own bundle is mapped: packages loaded from node_modules are named by their path already.
  const map = !frame.url.includes("node_modules") && (frame.url.endsWith(".mjs") || frame.url.endsWith(".js"))
    ? sourceMapOf(frame.url)
    : undefined
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as
    | { originalSource?: string; originalLine?: number; name?: string }
    | undefined
  if (entry?.originalSource !== undefined) {
    return {
      file: entry.originalSource,
      line: (entry.originalLine ?? 0) + 1,
      name: frame.functionName || entry.name || "(anonymous)"
    }
  }
  return { file: frame.url, line: frame.lineNumber + 1, name: frame.functionName || "(anonymous)" }
}

/** A table's rows, most time first, each with its share of `busyMs`. */
export const rowsOf = (msByName: ReadonlyMap<string, number>, busyMs: number): ReadonlyArray<Row> =>
  [...msByName].sort((a, b) => b[1] - a[1]).map(([name, ms]) => ({ name, ms, share: ms / busyMs }))

/** A function's row label: its name, and where it is (a package's path, or ours from `packages/`). */
export const functionLabel = (
  original: { readonly file: string; readonly line: number; readonly name: string }
): string =>
  original.file === ""
    ? original.name
    : `${original.name} ${
      original.file.replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "").replace(
        /^.*\/packages\//,
        "packages/"
      )
    }:${original.line}`

/** The package (or our own folder) a source file belongs to. */
export const packageOf = (file: string, name: string): string => {
  if (file === "") {
    if (name === "(garbage collector)") return "GC"
    if (name === "(program)") return "V8 / native (program)"
    if (name === "writev" || name === "writeUtf8String" || name === "writeBuffer") return "node: socket writes (native)"
    return `native ${name}`
  }
  if (file.startsWith("node:")) return `node: ${file.slice(5).split("/").slice(0, 2).join("/")}`
  if (file.startsWith("wasm://")) return "WASM (caller unknown)"
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(file)
  const modules = pnpm ?? /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(file)
  if (modules !== null) {
    const [, pkg, rest] = modules
    // effect is the framework: split it by area so the runtime, HTTP, SQL and Schema show apart.
    if (pkg === "effect") {
      const area = rest.replace(/^(src|dist)\//, "").replace(/\.(ts|js)$/, "")
      const parts = area.split("/")
      return `effect/${parts.length > 1 && parts[0] !== "internal" ? parts[0] : parts.join("/")}`
    }
    return pkg
  }
  // The bundle's map names our sources relative to packages/server/dist.
  const own = /packages\/([^/]+)\/src\/(?:([^/]+)\/)?/.exec(file) ??
    /^\.\.\/(?:\.\.\/([^/]+)\/)?src\/(?:([^/]+)\/)?/.exec(file)
  if (own !== null) return `@agent-platform/${own[1] ?? "server"}${own[2] === undefined ? "" : ` ${own[2]}/`}`
  return file
}

/** Now on the monotonic clock the profiler stamps its samples with, in ms. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6

/** How long after a profile's start a moment of {@link monotonicMs} came (profiles of this machine). */
export const sinceProfileStart = (path: string, at: number): number =>
  at - (JSON.parse(readFileSync(path, "utf8")) as Profile).startTime / 1000

/**
 * The package each WebAssembly module of a profile belongs to, named by the
 * JavaScript that calls into it: a process may run more than one (PGlite's
 * PostgreSQL, and undici's HTTP parser llhttp under `fetch` and the webhook
 * deliveries), and V8 names a module only by a hash of its bytes.
 */
const wasmOwners = (profile: Profile): ReadonlyMap<string, string> => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const owners = new Map<string, string>()
  for (const node of profile.nodes) {
    const { url } = node.callFrame
    if (!url.startsWith("wasm://") || owners.has(url)) continue
    let id = parentOf.get(node.id)
    while (id !== undefined) {
      const frame = byId.get(id)!.callFrame
      if (frame.url !== "" && !frame.url.startsWith("wasm://")) {
        const original = originalOf(frame)
        const pkg = packageOf(original.file, original.name)
        owners.set(
          url,
          pkg === "@electric-sql/pglite"
            ? "PGlite (PostgreSQL in WASM)"
            : pkg === "undici"
            ? "undici's HTTP parser (llhttp, WASM)"
            : `${pkg} (WASM)`
        )
        break
      }
      id = parentOf.get(id)
    }
  }
  return owners
}

/**
 * Self time per package and per function of a profile, leaving out its first
 * `skipMs` (start-up) and whatever came after `untilMs`.
 */
export const summarize = (path: string, skipMs = 0, untilMs = Number.POSITIVE_INFINITY): Summary => {
  const profile = JSON.parse(readFileSync(path, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMs = new Map<number, number>()
  let elapsedMs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    elapsedMs += profile.timeDeltas[i] / 1000
    if (elapsedMs < skipMs) continue
    if (elapsedMs > untilMs) break
    // timeDeltas[i] is the time before sample i; it belongs to the previous sample's node.
    const delta = (profile.timeDeltas[i + 1] ?? 0) / 1000
    selfMs.set(profile.samples[i], (selfMs.get(profile.samples[i]) ?? 0) + delta)
  }
  const packages = new Map<string, number>()
  const functions = new Map<string, number>()
  const wasmOwner = wasmOwners(profile)
  let busyMs = 0
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)!.callFrame
    if (frame.functionName === "(idle)") continue
    busyMs += ms
    const original = originalOf(frame)
    const pkg = wasmOwner.get(frame.url) ?? packageOf(original.file, original.name)
    packages.set(pkg, (packages.get(pkg) ?? 0) + ms)
    const key = functionLabel(original)
    functions.set(key, (functions.get(key) ?? 0) + ms)
  }
  return { busyMs, packages: rowsOf(packages, busyMs), functions: rowsOf(functions, busyMs) }
}

/** The summary as text: the top `top` rows of each table, per request when `requests` is given. */
export const format = (
  summary: Summary,
  options: { readonly top?: number | undefined; readonly requests?: number | undefined } = {}
): string => {
  const top = options.top ?? 25
  const per = (ms: number) =>
    options.requests === undefined
      ? `${ms.toFixed(0).padStart(7)} ms`
      : `${((ms * 1000) / options.requests).toFixed(1).padStart(7)} µs/req`
  const table = (title: string, rows: ReadonlyArray<Row>) =>
    [
      title,
      ...rows.slice(0, top).map((row) => `  ${per(row.ms)}  ${(row.share * 100).toFixed(1).padStart(5)} %  ${row.name}`)
    ].join("\n")
  return [
    `busy CPU ${per(summary.busyMs)}${options.requests === undefined ? "" : ` (${options.requests} requests)`}`,
    table("self time per package (our code per folder; effect per area):", summary.packages),
    table("self time per function:", summary.functions)
  ].join("\n")
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, requests] = process.argv.slice(2)
  if (file === undefined) {
    console.error("usage: node --import tsx bench/ProfileSummary.ts <file.cpuprofile> [requests]")
    process.exit(2)
  }
  console.log(format(summarize(file), { requests: requests === undefined ? undefined : Number(requests) }))
}
