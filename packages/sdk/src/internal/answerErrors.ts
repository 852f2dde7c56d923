/**
 * The Effect client's `SchemaError`s raised while decoding an answer; the
 * others come from encoding a call's arguments, before anything is sent. The
 * client marks them (its `transformResponse`), and the Promise client's
 * errors tell the two apart: `UnexpectedResponse` against `InvalidInputError`.
 * Internal: not exported from the package's root.
 */
const answerSchemaErrors = new WeakSet<object>()

/** Marks `error`, if it is a `SchemaError`, as raised by an answer. */
export const markAnswerError = <E>(error: E): E => {
  if (typeof error === "object" && error !== null && (error as { readonly _tag?: unknown })._tag === "SchemaError") {
    answerSchemaErrors.add(error)
  }
  return error
}

/** Whether `error` was marked by {@link markAnswerError}. */
export const isAnswerError = (error: object): boolean => answerSchemaErrors.has(error)
