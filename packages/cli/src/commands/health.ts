/** `agent-platform health`: the service's health report; exit code 1 when degraded. */
import { Console, Effect, Schema } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

/** The service answered, but not every check is ok. */
export class ServiceDegraded extends Schema.TaggedError<ServiceDegraded>()("ServiceDegraded", {
  message: Schema.String
}) {}

export const health = Command.make(
  "health",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    const { url, client } = yield* Connection.anonymous
    const report = yield* client.api.health()
    if (json) {
      yield* Output.json(report)
    } else {
      yield* Console.log(`status   ${report.status}   version ${report.version}   (${report.latency_ms} ms)`)
      for (const [check, state] of Object.entries(report.checks)) yield* Console.log(`  ${check.padEnd(16)} ${state}`)
    }
    if (report.status !== "ok") return yield* new ServiceDegraded({ message: `${url} is ${report.status}` })
  })
).pipe(Command.withDescription("Show the service's health report"))
