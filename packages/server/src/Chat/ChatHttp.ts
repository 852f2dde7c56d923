/**
 * Chat over Server-Sent Events: `data: <json>` events, comment heartbeats
 * every 15 s, and `data: [DONE]` last. Errors before the stream starts are
 * ordinary JSON errors (401/403/404/429); the engine reports later ones as an
 * `{type: "error"}` event. A client that disconnects interrupts the turn; the
 * engine keeps what was said so far.
 */
import { Api, type Chat } from "@agent-platform/domain"
import { Effect, Schedule, Stream } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { currentKey } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { ChatEngine } from "./ChatEngine.ts"
import { ChatHistory } from "./ChatHistory.ts"
import { UsageReport } from "./UsageReport.ts"

const encoder = new TextEncoder()

/** One SSE event carrying `data`. */
export const sseData = (data: string) => encoder.encode(`data: ${data}\n\n`)

export const heartbeatInterval = "15 seconds"

/** The SSE body of a turn: its events, heartbeats while it runs, then `[DONE]`. */
export const sseBody = (events: Stream.Stream<Chat.ChatEvent>) => {
  const heartbeats = Stream.fromSchedule(Schedule.spaced(heartbeatInterval)).pipe(
    Stream.map(() => encoder.encode(": ping\n\n"))
  )
  return Stream.merge(events.pipe(Stream.map((event) => sseData(JSON.stringify(event)))), heartbeats, {
    haltStrategy: "left"
  }).pipe(Stream.concat(Stream.make(sseData("[DONE]"))))
}

export const ChatHttp = HttpApiBuilder.group(Api, "chat", (handlers) =>
  Effect.gen(function*() {
    const engine = yield* ChatEngine
    const history = yield* ChatHistory
    return handlers
      .handle("completions", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* currentKey
          const turn = yield* engine.send({
            caller,
            space: payload.space,
            chatId: payload.chat_id,
            message: payload.message,
            history: payload.history
          })
          return HttpServerResponse.stream(sseBody(turn.events), {
            contentType: "text/event-stream",
            headers: {
              "cache-control": "no-cache",
              "x-accel-buffering": "no",
              "x-chat-id": turn.chatId
            }
          })
        }).pipe(orDieOnSql))
      .handle("history", ({ params }) =>
        Effect.flatMap(currentKey, (caller) =>
          history.read({ caller, chatId: params.chatId })).pipe(orDieOnSql))
  }))

export const UsageHttp = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* UsageReport
    return handlers.handle("get", ({ query }) =>
      Effect.flatMap(currentKey, (caller) =>
        usage.report({ tenantId: caller.tenantId, spaceId: boundSpace(caller), period: query.period ?? "30d" })).pipe(
          orDieOnSql
        ))
  }))
