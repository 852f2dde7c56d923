/**
 * The circuit breaker of outbound calls (actions, webhooks, model providers):
 * effect's CircuitBreaker keyed by target host. It trips after 5 consecutive
 * failures to a host and probes again after 30 s. `/health` reports the worst
 * state across hosts.
 */
import { Context, Effect, Layer, Ref, Stream } from "effect"
import * as CircuitBreaker from "effect/persistence/CircuitBreaker"

export type BreakerState = "closed" | "half-open" | "open"

const rank: Record<BreakerState, number> = { closed: 0, "half-open": 1, open: 2 }

export class OutboundBreaker extends Context.Service<OutboundBreaker, {
  readonly breaker: CircuitBreaker.CircuitBreaker
  /** The worst state across every host that has tripped since start. */
  readonly worstState: Effect.Effect<BreakerState>
}>()("@agent-platform/server/Platform/OutboundBreaker") {
  static readonly layer = Layer.effect(
    OutboundBreaker,
    Effect.gen(function*() {
      const breaker = yield* CircuitBreaker.CircuitBreaker
      // Hosts that opened at least once; a host leaves the set once closed again.
      const tripped = yield* Ref.make<ReadonlySet<string>>(new Set())
      yield* breaker.transitions.pipe(
        Stream.runForEach((transition) =>
          transition.to === "Open"
            ? Ref.update(tripped, (keys) => new Set([...keys, transition.key]))
            : Effect.void
        ),
        Effect.forkScoped
      )
      const stateOf = (key: string) =>
        breaker.state(key).pipe(
          Effect.map((state): BreakerState =>
            state._tag === "Open" ? "open" : state._tag === "HalfOpen" ? "half-open" : "closed"
          ),
          Effect.orElseSucceed((): BreakerState => "closed")
        )
      const worstState = Effect.gen(function*() {
        let worst: BreakerState = "closed"
        for (const key of yield* Ref.get(tripped)) {
          const state = yield* stateOf(key)
          if (state === "closed") yield* Ref.update(tripped, (keys) => new Set([...keys].filter((k) => k !== key)))
          if (rank[state] > rank[worst]) worst = state
        }
        return worst
      })
      return OutboundBreaker.of({ breaker, worstState })
    })
  ).pipe(
    Layer.provide(CircuitBreaker.layer({ tripPolicy: CircuitBreaker.consecutive(5), openDuration: "30 seconds" })),
    Layer.provide(CircuitBreaker.layerStoreMemory())
  )
}
