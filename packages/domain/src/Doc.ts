/** OpenAPI documentation shorthands shared by the groups. */
import { Schema } from "effect"
import * as OpenApi from "effect/http-api/OpenApi"

/** A summary and an optional description for an endpoint. */
export const doc = (summary: string, description?: string) =>
  OpenApi.annotations(description === undefined ? { summary } : { summary, description })

/**
 * A request body that ignores fields it does not name (as every decoded body
 * does): declared open in OpenAPI (`additionalProperties` allowed), so the
 * description does not claim a client's extra field is an error.
 */
export const openBody = <const S extends Schema.Struct<Schema.Struct.Fields>>(schema: S) =>
  Schema.StructWithRest(schema, [Schema.Record(Schema.String, Schema.Unknown)])

/**
 * An example body for one response of an endpoint, for bodies whose schema
 * cannot carry it: error classes (their annotations cannot refer to the class
 * being declared) and SCIM's error schema.
 */
export const responseExample = (status: number, example: unknown) =>
  OpenApi.annotations({
    transform: (operation) => {
      for (const media of Object.values(operation.responses?.[String(status)]?.content ?? {})) {
        ;(media as { example?: unknown }).example = example
      }
      return operation
    }
  })
