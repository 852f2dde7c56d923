/** `agent-platform health`: the service's health report; exit code 1 when degraded. */
import { Console, Effect, Option } from "effect"
import { Command } from "effect/cli"
import * as Sdk from "@agent-platform/sdk"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { root } from "../Root.ts"

export const defaultUrl = () => process.env.AGENT_PLATFORM_URL ?? "http://127.0.0.1:8080"

export const health = Command.make("health", {}, () =>
  Effect.gen(function*() {
    const { url, json } = yield* root
    const client = yield* Sdk.make({ baseUrl: Option.getOrElse(url, defaultUrl) })
    const report = yield* client.api.health()
    if (json) {
      yield* Console.log(JSON.stringify(report, null, 2))
    } else {
      yield* Console.log(`status   ${report.status}   version ${report.version}   (${report.latency_ms} ms)`)
      for (const [check, state] of Object.entries(report.checks)) yield* Console.log(`  ${check.padEnd(16)} ${state}`)
    }
    if (report.status !== "ok") return yield* Effect.fail(new Error("the service is degraded"))
  }).pipe(Effect.provide(FetchHttpClient.layer))).pipe(Command.withDescription("Show the service's health report"))
