/**
 * Chat over Server-Sent Events: `data: <json>` events, comment heartbeats
 * every 15 s, and `data: [DONE]` last. Errors before the stream starts are
 * ordinary JSON errors (401/403/404/429); the engine reports later ones as an
 * `{type: "error"}` event. A client that disconnects interrupts the turn; the
 * engine keeps what was said so far.
 */
import { Api } from "@agent-platform/domain"
import { Effect, Queue, Stream } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { currentKey } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { ChatEngine, type Emit } from "./ChatEngine.ts"
import { ChatHistory } from "./ChatHistory.ts"
import { SseHeartbeats } from "./SseHeartbeats.ts"
import { UsageReport } from "./UsageReport.ts"

const encoder = new TextEncoder()

/** One SSE event carrying `data`. */
export const sseData = (data: string) => encoder.encode(`data: ${data}\n\n`)

/** Frames buffered between a turn and its response at most. */
const bufferSize = 64

const done = sseData("[DONE]")

/**
 * The SSE body of a turn: its events, a heartbeat at each of the process's
 * 15-second ticks while the turn runs (SseHeartbeats), then `[DONE]`. The turn
 * runs inside the body (ChatEngine `run`) and frames each event straight into
 * the buffer the response drains: the events a turn produced while the last
 * write went out leave together in the next one. An answer of 30 tokens from
 * the embedded model is three writes, not 30. A client that reads slower
 * than the turn speaks holds the turn back once `bufferSize` frames wait; a
 * turn cut short (the client left) stores what it handed to the buffer, which
 * is at most that many frames more than what Node took — less than its socket
 * buffers hold anyway. One buffer and one fiber per response, not a second
 * stream in lockstep between the turn and the buffer: that layer cost a chat
 * in a burst of 200 about a tenth of its CPU.
 */
export const sseBody = (
  heartbeats: SseHeartbeats["Service"],
  run: (emit: Emit) => Effect.Effect<void>
): Stream.Stream<Uint8Array> =>
  Stream.callback<Uint8Array>((queue) =>
    heartbeats.beating(
      queue,
      Effect.andThen(
        run((event) => Effect.asVoid(Queue.offer(queue, sseData(JSON.stringify(event))))),
        Queue.offer(queue, done)
      )
    ).pipe(Effect.andThen(Queue.end(queue))), { bufferSize })

export const ChatHttp = HttpApiBuilder.group(Api, "chat", (handlers) =>
  Effect.gen(function*() {
    const engine = yield* ChatEngine
    const history = yield* ChatHistory
    const heartbeats = yield* SseHeartbeats
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
          return HttpServerResponse.stream(sseBody(heartbeats, turn.run), {
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
