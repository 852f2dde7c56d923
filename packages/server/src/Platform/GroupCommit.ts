/**
 * Group commit: a `RequestResolver` whose requests made while its previous
 * batch runs wait for it to finish, then go together in one batch. A burst
 * of chats (each reading its space's agents, each storing its new chat), or
 * of uploads, thus costs a few statements instead of one each, and nothing
 * waits for a timer: an idle resolver runs a request at once.
 *
 * Every request still sees the database as it was after it was made: a
 * batch only starts after all its requests arrived. On the embedded
 * database, where every statement runs on the one WASM backend in turn,
 * this is what keeps a burst's queue short.
 *
 * A batch runs with the context of the request that opened it: a caller
 * inside a transaction must run its statement itself, or its batch could
 * carry other callers' writes into that transaction (KnowledgeRepo does).
 */
import { Effect, Exit, Latch, type Request, RequestResolver } from "effect"
import type { NonEmptyArray } from "effect/Array"

/**
 * A resolver running `runAll` one batch at a time, each of at most `maxBatch`
 * requests — and, with `weight`, closed once their weights add up to
 * `weight.max` (a batch of large rows stays a statement of bounded size).
 */
export const groupCommit = <A extends Request.Any>(options: {
  readonly maxBatch: number
  readonly weight?: { readonly of: (request: A) => number; readonly max: number } | undefined
  readonly runAll: (entries: NonEmptyArray<Request.Entry<A>>) => Effect.Effect<void, Request.Error<A>>
}): RequestResolver.RequestResolver<A> => {
  // Open while no batch runs; the next batch collects requests while it waits for it.
  const idle = Latch.makeUnsafe(true)
  const { maxBatch, weight } = options
  const underWeight = (entries: ReadonlySet<Request.Entry<A>>) => {
    if (weight === undefined) return true
    let total = 0
    for (const entry of entries) total += weight.of(entry.request)
    return total < weight.max
  }
  return RequestResolver.makeWith<A>({
    batchKey: () => "batch",
    delay: Effect.andThen(Latch.await(idle), Effect.yieldNow),
    collectWhile: (entries) => entries.size < maxBatch && underWeight(entries),
    runAll: (entries) =>
      Effect.suspend(() => {
        Latch.closeUnsafe(idle)
        return options.runAll(entries)
      }).pipe(Effect.ensuring(Effect.sync(() => Latch.openUnsafe(idle))))
  })
}

/**
 * A group-committed write whose statement answers each request: `run` gets
 * the batch's requests and returns their answers in the same order. When the
 * statement fails, each request of the batch is run alone, so that one
 * request's failure (a value the database refuses) stays its own.
 */
export const groupCommitEach = <A extends Request.Any>(options: {
  readonly maxBatch: number
  readonly weight?: { readonly of: (request: A) => number; readonly max: number } | undefined
  readonly run: (
    requests: ReadonlyArray<A>
  ) => Effect.Effect<ReadonlyArray<Request.Success<A>>, Request.Error<A>>
}): RequestResolver.RequestResolver<A> =>
  groupCommit<A>({
    maxBatch: options.maxBatch,
    weight: options.weight,
    runAll: (entries) =>
      options.run(entries.map((entry) => entry.request)).pipe(
        Effect.map((answers) => entries.forEach((entry, i) => entry.completeUnsafe(Exit.succeed(answers[i])))),
        Effect.catch((error) =>
          entries.length === 1
            ? Effect.sync(() => entries[0].completeUnsafe(Exit.fail(error)))
            : Effect.forEach(entries, (entry) =>
              Effect.exit(options.run([entry.request])).pipe(
                Effect.map((exit) => entry.completeUnsafe(Exit.map(exit, (answers) => answers[0])))
              ), { discard: true })
        )
      )
  })
