/**
 * Infrastructure failures (the database, the key-value store) are not part of
 * any endpoint's contract: at the HTTP boundary they become defects, which the
 * HTTP edge logs with the request id and answers with a 500 `{error}`.
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"

const isInfrastructureError = (error: unknown): boolean => {
  const tag = (error as { readonly _tag?: unknown } | null)?._tag
  return tag === "SqlError" || tag === "KeyValueStoreError" || tag === "RedisError"
}

/** Turns SQL failures into defects, keeping every other error typed. */
export const orDieOnSql = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  Effect.catch(
    self,
    (error) => (isInfrastructureError(error) ? Effect.die(error) : Effect.fail(error))
  ) as Effect.Effect<
    A,
    Exclude<E, SqlError>,
    R
  >
