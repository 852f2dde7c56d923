/**
 * The `real[]` codec for `Float32Array`s (Platform/PgFloat4Arrays.ts): the
 * bytes sql-pg's own codec writes for the same numbers, and everything else
 * left to sql-pg. Ingestion.test.ts stores and reads vectors through it on
 * both databases.
 */
import * as PgTypes from "@effect/sql-pg/PgTypes"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as EmbeddedPostgres from "../src/Platform/EmbeddedPostgres.ts"
import { encodeFloat32Array, float4Array, registry } from "../src/Platform/PgFloat4Arrays.ts"

const builtin = (values: ReadonlyArray<number>) => Result.getOrThrow(PgTypes.encode(values, PgTypes.OID.float4Array))

describe("PgFloat4Arrays", () => {
  it("writes a Float32Array as sql-pg writes the same numbers as an array", () => {
    for (
      const values of [
        [],
        [0],
        [1, -1, 0.5, 3.4028234663852886e38, -1.401298464324817e-45, 0.1],
        Array.from({ length: 512 }, (_, i) => Math.sin(i) / 7)
      ]
    ) {
      const typed = new Float32Array(values)
      assert.deepStrictEqual(encodeFloat32Array(typed), builtin(Array.from(typed)))
      assert.deepStrictEqual(
        Result.getOrThrow(PgTypes.encode(typed, PgTypes.OID.float4Array, registry)),
        builtin(Array.from(typed))
      )
    }
  })

  it("leaves plain arrays and every read to sql-pg's codec", () => {
    const values = [0.25, -2, 1e-3]
    const bytes = Result.getOrThrow(PgTypes.encode(values, PgTypes.OID.float4Array, registry))
    assert.deepStrictEqual(bytes, builtin(values))
    assert.deepStrictEqual(Result.getOrThrow(PgTypes.decode(bytes, PgTypes.OID.float4Array, 1, registry)), [
      0.25,
      -2,
      Math.fround(1e-3)
    ])
    assert.strictEqual(float4Array(new Float32Array(values)).oid, PgTypes.OID.float4Array)
  })
})

// The service's clients are made with the registry: both kinds of value reach PostgreSQL as the same `real[]`.
layer(EmbeddedPostgres.layer({ dataDir: undefined }), { timeout: "60 seconds" })("PgFloat4Arrays in a client", (it) => {
  it.effect("sends a Float32Array and a plain array as the same real[], and reads it back", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const values = [0.25, -2, 0.1, 0]
      const [row] = yield* sql<{ typed: ReadonlyArray<number>; plain: ReadonlyArray<number>; same: boolean }>`
        SELECT ${float4Array(new Float32Array(values))}::real[] AS typed,
               ${Result.getOrThrow(PgTypes.array(values, PgTypes.OID.float4))}::real[] AS plain,
               ${float4Array(new Float32Array(values))}::real[] = ${
        Result.getOrThrow(PgTypes.array(values, PgTypes.OID.float4))
      }::real[] AS same`
      const expected = values.map(Math.fround)
      assert.deepStrictEqual([...row.typed], expected)
      assert.deepStrictEqual([...row.plain], expected)
      assert.isTrue(row.same)
    }))
})
