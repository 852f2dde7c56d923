/**
 * The comment heartbeats of the chat SSE responses (spec: "comment
 * heartbeats every 15 s"), which keep proxies from closing a quiet stream:
 * one fiber of the process offers `: ping` to every open response every 15 s
 * (a new response gets its first within 15 s), instead of a fiber and a
 * timer per response — forked, armed, then
 * interrupted and disarmed for every chat, they cost about 95 µs of CPU a
 * chat (a micro-bench of 5,000 streams, 200 at a time), more than a tenth of
 * what opening a chat in a burst costs. A response whose client is not
 * reading (its buffer full) skips a beat; one that has ended gets none.
 */
import { Context, Duration, Effect, Layer, Queue } from "effect"

const heartbeatInterval = Duration.seconds(15)

/** The SSE comment sent as a heartbeat. */
const heartbeat = new TextEncoder().encode(": ping\n\n")

/** Where a response's frames go: what the heartbeat is offered to. */
type Frames = Queue.Enqueue<Uint8Array, any>

export class SseHeartbeats extends Context.Service<SseHeartbeats, {
  /** Runs `effect` with `frames` getting a heartbeat every {@link heartbeatInterval} until it ends. */
  readonly beating: <A, E, R>(frames: Frames, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("@agent-platform/server/Chat/SseHeartbeats") {
  static readonly layer = Layer.effect(
    SseHeartbeats,
    Effect.gen(function*() {
      const open = new Set<Frames>()
      yield* Effect.sleep(heartbeatInterval).pipe(
        Effect.andThen(Effect.sync(() => {
          for (const frames of open) Queue.offerUnsafe(frames, heartbeat)
        })),
        Effect.forever,
        Effect.forkScoped
      )
      return SseHeartbeats.of({
        beating: (frames, effect) =>
          Effect.suspend(() => {
            open.add(frames)
            return Effect.ensuring(effect, Effect.sync(() => open.delete(frames)))
          })
      })
    })
  )
}
