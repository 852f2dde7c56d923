/**
 * `real[]` parameters from a `Float32Array`, for the vectors ingestion writes
 * (about 4,000 numbers per 4 KB document). sql-pg's own `real[]` codec
 * writes an array element by element, each framed on its own, which cost the
 * worker about 100 µs per document; this one fills PostgreSQL's binary array
 * format in one pass over a typed array. Any other value of the type (a plain
 * array) and every `real[]` read go through sql-pg's codec unchanged.
 *
 * The codec lives in a registry of the client's (`types`), the documented way
 * to add or override a binary codec: every client of the service's database
 * is made with it (Platform/Database.ts, Platform/EmbeddedPostgres.ts).
 */
import * as PgTypes from "@effect/sql-pg/PgTypes"
import { Result } from "effect"

/** Dimensions, null flag, element type, then the one dimension's length and lower bound. */
const headerBytes = 20

/** A one-dimensional `real[]` in PostgreSQL's binary format: each element's length (4), then its big-endian bits. */
export const encodeFloat32Array = (values: Float32Array): Uint8Array => {
  if (values.length === 0) {
    const empty = new Uint8Array(12)
    new DataView(empty.buffer).setInt32(8, PgTypes.OID.float4)
    return empty
  }
  const bytes = new Uint8Array(headerBytes + values.length * 8)
  const view = new DataView(bytes.buffer)
  view.setInt32(0, 1)
  view.setInt32(4, 0)
  view.setInt32(8, PgTypes.OID.float4)
  view.setInt32(12, values.length)
  view.setInt32(16, 1)
  for (let i = 0, at = headerBytes; i < values.length; i++, at += 8) {
    view.setInt32(at, 4)
    view.setFloat32(at + 4, values[i])
  }
  return bytes
}

/** A `real[]` parameter of `value`. */
const parameter = (value: unknown): PgTypes.Parameter => ({
  [PgTypes.ParameterTypeId]: PgTypes.ParameterTypeId,
  oid: PgTypes.OID.float4Array,
  value
})

/** The codecs of every client of the service's database: sql-pg's, with `real[]` also taking a `Float32Array`. */
export const registry: PgTypes.Registry = PgTypes.makeRegistry()
registry.register<unknown>(PgTypes.OID.float4Array, {
  encode: (value) =>
    value instanceof Float32Array
      ? Result.succeed(encodeFloat32Array(value))
      : PgTypes.encode(value, PgTypes.OID.float4Array),
  decode: (bytes) => PgTypes.decode(bytes, PgTypes.OID.float4Array, 1),
  // Into the Bind frame: anything but a Float32Array through sql-pg's own writer (its module registry's codec).
  write: (sink, value) => {
    if (!(value instanceof Float32Array)) return PgTypes.writeParameter(sink, parameter(value))
    sink.raw(encodeFloat32Array(value))
    return Result.void
  }
})

/** A `real[]` parameter of a `Float32Array` (for a client made with {@link registry}). */
export const float4Array = (values: Float32Array): PgTypes.Parameter => parameter(values)
