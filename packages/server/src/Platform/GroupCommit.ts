/**
 * Group commit: a `RequestResolver` whose requests made while its previous
 * batch runs wait for it to finish, then go together in one batch. A burst
 * of chats (each reading its space's agents, each storing its new chat)
 * thus costs a few statements instead of one per chat, and nothing waits
 * for a timer: an idle resolver runs a request at once.
 *
 * Every request still sees the database as it was after it was made: a
 * batch only starts after all its requests arrived. On the embedded
 * database, where every statement runs on the one WASM backend in turn,
 * this is what keeps a burst's queue short.
 */
import { Effect, Latch, type Request, RequestResolver } from "effect"
import type { NonEmptyArray } from "effect/Array"

/** A resolver running `runAll` one batch at a time, each of at most `maxBatch` requests. */
export const groupCommit = <A extends Request.Any>(options: {
  readonly maxBatch: number
  readonly runAll: (entries: NonEmptyArray<Request.Entry<A>>) => Effect.Effect<void, Request.Error<A>>
}): RequestResolver.RequestResolver<A> => {
  // Open while no batch runs; the next batch collects requests while it waits for it.
  const idle = Latch.makeUnsafe(true)
  return RequestResolver.makeWith<A>({
    batchKey: () => "batch",
    delay: Effect.andThen(Latch.await(idle), Effect.yieldNow),
    collectWhile: (entries) => entries.size < options.maxBatch,
    runAll: (entries) =>
      Effect.suspend(() => {
        Latch.closeUnsafe(idle)
        return options.runAll(entries)
      }).pipe(Effect.ensuring(Effect.sync(() => Latch.openUnsafe(idle))))
  })
}
