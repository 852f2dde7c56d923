/**
 * Linux `perf` profiles of the service: what V8's own profiler
 * (ProfileSummary.ts) cannot show. `perf record` samples the whole process —
 * the kernel (a response's socket write), Node's C++, V8's builtins and
 * runtime calls (an inline cache gone megamorphic, a literal built in the
 * runtime) — and the JIT's functions by name, through the map file node
 * writes with `--perf-basic-prof-only-functions`.
 *
 * Each sample's time is charged to its innermost JavaScript function,
 * natives included (what that function costs, whatever it calls into
 * outside JavaScript), mapped from the bundle to the original source as in
 * ProfileSummary.ts — except the kernel's, shown as `kernel, for <function>`;
 * a sample with no JavaScript on its stack is charged to its native frame.
 * Only the main thread counts: V8's helper threads (concurrent GC and
 * compilation) run on the other core.
 *
 * Needs `perf` on PATH and permission to profile the process (root here;
 * else `kernel.perf_event_paranoid` <= 1).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { functionLabel, originalOf, packageOf, rowsOf, type Summary } from "./ProfileSummary.ts"

/** The flag node needs so that perf can name the JIT's functions. */
export const perfNodeArgs = ["--perf-basic-prof-only-functions"]

/** The map file node writes for perf with those flags (always under /tmp; node leaves it there). */
export const perfMapFile = (pid: number) => `/tmp/perf-${pid}.map`

/** Whether `perf` can be run here. */
export const perfAvailable = (): boolean => {
  try {
    execFileSync("perf", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** A recording of one process until `stop`: then the `perf.data` file. */
export interface PerfRecording {
  readonly stop: () => Promise<string>
}

/** Starts sampling process `pid` (and its threads) at `hz` per second, with call stacks, into `file`. */
export const recordPerf = async (pid: number, file: string, hz = 2000): Promise<PerfRecording> => {
  const perf: ChildProcess = spawn(
    "perf",
    ["record", "-e", "cpu-clock", "-F", String(hz), "-g", "-p", String(pid), "-o", file],
    { stdio: ["ignore", "ignore", "pipe"] }
  )
  let stderr = ""
  perf.stderr?.on("data", (chunk: Buffer) => stderr += chunk.toString())
  // perf attaches within a few milliseconds; it says nothing until it stops.
  await new Promise((resolve) => setTimeout(resolve, 300))
  if (perf.exitCode !== null) throw new Error(`perf record exited (${perf.exitCode}): ${stderr}`)
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        const written = () =>
          existsSync(file) ? resolve(file) : reject(new Error(`perf record wrote nothing: ${stderr}`))
        // perf may have ended on its own (the process it sampled exited): then there is nothing to wait for.
        if (perf.exitCode !== null || perf.signalCode !== null) return written()
        perf.once("exit", written)
        perf.kill("SIGINT")
      })
  }
}

/** A frame of `perf script`: the symbol, and whether it is the kernel's. */
interface Frame {
  readonly symbol: string
  readonly kernel: boolean
}

/** `JS:*name file:///…/main.mjs:12:34` (the marker says the tier: * optimized, ^ baseline, ~ interpreted). */
const jsFrame = /^JS:[*^~+]?(.*?) ?((?:file:\/\/|node:)\S+):(\d+):(\d+)$/

/** Where a sample's time goes: the innermost JavaScript frame, else the innermost native one. */
const chargedTo = (frames: ReadonlyArray<Frame>): { readonly name: string; readonly pkg: string } => {
  const inKernel = frames[0]?.kernel === true
  for (const frame of frames) {
    const js = jsFrame.exec(frame.symbol)
    if (js === null) continue
    const [, functionName, url, line, column] = js
    const original = originalOf({
      functionName,
      url,
      lineNumber: Number(line) - 1,
      columnNumber: Number(column) - 1
    })
    const name = functionLabel(original)
    // The kernel's time (a socket write, say) shows as such, named after the function that called into it.
    return inKernel
      ? { name: `kernel, for ${name}`, pkg: "kernel" }
      : { name, pkg: packageOf(original.file, original.name) }
  }
  const leaf = frames[0]
  if (leaf === undefined) return { name: "(no stack)", pkg: "native (no stack)" }
  return { name: leaf.symbol, pkg: leaf.kernel ? "kernel" : `native ${leaf.symbol.replace(/[(<].*$/, "")}` }
}

/**
 * Names a JIT address from node's perf map file (`start size name` per
 * line, in the order the code was made). V8 frees code and reuses its
 * addresses, and the file keeps every entry: perf names an address after
 * whichever entry it picks, often the older one, so that code compiled at
 * startup (the seeding's) took the samples of what replaced it. Here the
 * entry written last wins, over each part of its range: right for code made
 * before the recording, which is what a profile under steady load samples.
 */
const makeJitResolver = (text: string): (ip: bigint) => string | undefined => {
  const entries: Array<{ readonly start: bigint; readonly end: bigint; readonly name: string }> = []
  for (const line of text.split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (match === null) continue
    const start = BigInt(`0x${match[1]}`)
    entries.push({ start, end: start + BigInt(`0x${match[2]}`), name: match[3] })
  }
  // Sweep the boundaries: each segment between two belongs to the latest entry covering it.
  const boundaries = [...new Set(entries.flatMap((entry) => [entry.start, entry.end]))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0
  )
  const startsAt = new Map<bigint, Array<number>>()
  entries.forEach((entry, index) => {
    const starting = startsAt.get(entry.start)
    if (starting === undefined) startsAt.set(entry.start, [index])
    else starting.push(index)
  })
  const segments: Array<{ readonly start: bigint; readonly name: string | undefined }> = []
  const active: Array<number> = [] // indexes of the entries covering the current segment, latest last
  for (const boundary of boundaries) {
    for (let i = active.length - 1; i >= 0; i--) if (entries[active[i]].end <= boundary) active.splice(i, 1)
    for (const index of startsAt.get(boundary) ?? []) {
      const at = active.findIndex((other) => other > index)
      active.splice(at === -1 ? active.length : at, 0, index)
    }
    segments.push({ start: boundary, name: active.length === 0 ? undefined : entries[active[active.length - 1]].name })
  }
  return (ip) => {
    let low = 0
    let high = segments.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (segments[middle].start <= ip) low = middle
      else high = middle - 1
    }
    return segments[low]?.start <= ip ? segments[low].name : undefined
  }
}

/**
 * Time per function and per package on the main thread of the recording
 * (its thread id is the process id) of `pid`.
 */
export const summarizePerf = (file: string, pid: number): Summary => {
  const script = execFileSync("perf", ["script", "-i", file, "-F", "tid,period,ip,sym,dso"], {
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"]
  }).toString()
  const jitMap = perfMapFile(pid)
  const jitSymbol = existsSync(jitMap) ? makeJitResolver(readFileSync(jitMap, "utf8")) : undefined
  const functions = new Map<string, number>()
  const packages = new Map<string, number>()
  let busyMs = 0
  for (const block of script.split("\n\n")) {
    const lines = block.split("\n").filter((line) => line.trim() !== "")
    const header = /^\s*(\d+)\s+(\d+)\s*$/.exec(lines[0] ?? "")
    if (header === null || Number(header[1]) !== pid) continue
    const ms = Number(header[2]) / 1e6
    const frames = lines.slice(1).map((line): Frame => {
      const match = /^\s*([0-9a-f]+)\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$/.exec(line)
      if (match === null) return { symbol: line.trim(), kernel: false }
      const [, ip, symbol, dso] = match
      // The JIT's code: named from the map file, the entry written last winning (see makeJitResolver).
      if (dso === jitMap && jitSymbol !== undefined) {
        return { symbol: jitSymbol(BigInt(`0x${ip}`)) ?? symbol, kernel: false }
      }
      return { symbol, kernel: dso.includes("kernel") }
    })
    const charged = chargedTo(frames)
    busyMs += ms
    functions.set(charged.name, (functions.get(charged.name) ?? 0) + ms)
    packages.set(charged.pkg, (packages.get(charged.pkg) ?? 0) + ms)
  }
  return { busyMs, packages: rowsOf(packages, busyMs), functions: rowsOf(functions, busyMs) }
}
