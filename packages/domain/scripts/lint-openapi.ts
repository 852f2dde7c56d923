/**
 * Lints the contract as outside tools see it: `/openapi.json` (generated
 * from the domain's `Api`, exactly as the server serves it) through
 * redocly's `recommended` rules and Spectral's `spectral:oas`. Any error or
 * warning fails. Needs no network: telemetry and update checks are off.
 *
 * `pnpm lint:openapi` (or `tsx packages/domain/scripts/lint-openapi.ts [FILE]`
 * to keep the document in FILE).
 */
import * as OpenApi from "effect/http-api/OpenApi"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Api } from "../src/Api.ts"

const file = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), "openapi-")), "openapi.json")
writeFileSync(file, JSON.stringify(OpenApi.fromApi(Api), null, 2))

const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }

const run = (command: string, args: ReadonlyArray<string>): { readonly ok: boolean; readonly output: string } => {
  try {
    return {
      ok: true,
      output: execFileSync(command, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    }
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string }
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` }
  }
}

/**
 * Findings accepted on purpose, each with its reason: a rule and the JSON
 * pointer prefix it is accepted under. Nothing else is.
 */
const accepted: ReadonlyArray<
  { readonly rules: ReadonlyArray<string>; readonly pointer: string; readonly why: string }
> = [{
  rules: ["operation-2xx-response", "operation-success-response"],
  pointer: "#/paths/~1api~1chats~1{id}~1ws/get",
  why: "a WebSocket upgrade answers 101 Switching Protocols by protocol (RFC 6455); it has no 2xx"
}]

const isAccepted = (rule: string, pointer: string | undefined) =>
  pointer !== undefined && accepted.some((entry) => entry.rules.includes(rule) && pointer.startsWith(entry.pointer))

// redocly exits 0 on warnings: its JSON report lists them.
const redocly = run("redocly", ["lint", file, "--format", "json"])
const report = JSON.parse(redocly.output.slice(redocly.output.indexOf("{"))) as {
  readonly totals: { readonly errors: number; readonly warnings: number }
  readonly problems: ReadonlyArray<
    {
      readonly ruleId: string
      readonly message: string
      readonly location: ReadonlyArray<{ readonly pointer?: string }>
    }
  >
}
const redoclyProblems = report.problems.filter((problem) => !isAccepted(problem.ruleId, problem.location[0]?.pointer))
for (const problem of redoclyProblems) {
  console.log(`redocly ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? "?"}`)
}
console.log(`redocly (recommended): ${redoclyProblems.length} problems`)

const spectral = run("spectral", ["lint", file, "--fail-severity", "hint", "--format", "json", "--quiet"])
const spectralProblems =
  (JSON.parse(spectral.output.slice(Math.max(0, spectral.output.indexOf("["))) || "[]") as ReadonlyArray<{
    readonly code: string
    readonly message: string
    readonly path: ReadonlyArray<string>
  }>).filter((problem) =>
    !isAccepted(
      problem.code,
      `#/${problem.path.map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`
    )
  )
for (const problem of spectralProblems) {
  console.log(`spectral ${problem.code}: ${problem.message} at ${problem.path.join(".")}`)
}
console.log(`spectral (spectral:oas): ${spectralProblems.length} problems`)

if (redoclyProblems.length + spectralProblems.length > 0) process.exit(1)
