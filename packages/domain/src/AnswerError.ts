/**
 * The error classes of the contract: what the API answers (4xx, and the 5xx
 * it describes), each a `Schema.TaggedError` made without a stack trace.
 *
 * They are answers, not bugs: no log prints their stack and no client reads
 * it (the SDK decodes them from a response body, where a stack could only
 * point into the SDK itself). Capturing one made V8 walk the effect run
 * loop's frames on every refused request: measured on the service, about a
 * fifth of the CPU time of a 401 (~50 µs on a slow machine). A defect keeps
 * its stack: only these classes leave it out.
 */
import type { Cause } from "effect"
import { Schema } from "effect"

/**
 * `Schema.TaggedError<Self>()(tag, fields, annotations)`, whose instances
 * carry no stack trace (see the module's comment).
 */
export const AnswerError = <Self = never>() =>
<Tag extends string, const Fields extends Schema.Struct.Fields>(
  tag: Tag,
  fields: Fields,
  annotations?: Schema.Annotations.Declaration<Self, readonly [Schema.TaggedStruct<Tag, Fields>]>
): Schema.Class<Self, Schema.TaggedStruct<Tag, Fields>, Cause.YieldableError> => {
  const Base: new(...args: Array<any>) => object = Schema.TaggedError<Self>()(tag, fields, annotations) as any
  return class extends Base {
    constructor(...args: Array<any>) {
      const limit = Error.stackTraceLimit
      Error.stackTraceLimit = 0
      try {
        super(...args)
      } finally {
        Error.stackTraceLimit = limit
      }
    }
  } as any
}
