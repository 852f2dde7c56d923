/**
 * The stored VAPID key pair of a PostgreSQL deployment (one row). The first
 * writer wins: a replica that races another reads the winner's pair back.
 */
import { Context, Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as SqlSchema from "effect/sql/SqlSchema"

const StoredPair = Schema.Struct({ public_key: Schema.String, private_key_encrypted: Schema.String })
export type StoredPair = typeof StoredPair.Type

export class VapidKeysRepo extends Context.Service<VapidKeysRepo, {
  /** Stores `pair` unless a pair is stored already; the stored pair either way. */
  readonly insertOrGet: (pair: StoredPair) => Effect.Effect<StoredPair, SqlError>
}>()("@agent-platform/server/Push/VapidKeysRepo") {
  static readonly layer = Layer.effect(
    VapidKeysRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const stored = SqlSchema.findOne({
        Request: Schema.Void,
        Result: StoredPair,
        execute: () => sql`SELECT public_key, private_key_encrypted FROM vapid_keys`
      })
      // Two statements: the SELECT's own snapshot sees a pair a racing replica committed meanwhile.
      const insertOrGet = (pair: StoredPair) =>
        Effect.gen(function*() {
          yield* sql`
            INSERT INTO vapid_keys (public_key, private_key_encrypted)
            VALUES (${pair.public_key}, ${pair.private_key_encrypted})
            ON CONFLICT (id) DO NOTHING`
          return yield* stored(undefined)
        }).pipe(Effect.catchTag("SchemaError", Effect.die), Effect.catchTag("NoSuchElementError", Effect.die))
      return VapidKeysRepo.of({ insertOrGet })
    })
  )
}
