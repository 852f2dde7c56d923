/** Action schemas (spec: "Action (catalog entry)", "ActionResponse"). */
import { Schema } from "effect"
import { StorableString } from "../Text.ts"

export const ParameterType = Schema.Literals(["string", "number", "integer", "boolean", "object", "array"])
export type ParameterType = typeof ParameterType.Type

export const ActionParameter = Schema.Struct({
  name: Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: "must be an identifier" })),
  type: ParameterType,
  description: StorableString.check(Schema.isMaxLength(2000)),
  required: Schema.Boolean
}).annotate({ identifier: "ActionParameter" })
export type ActionParameter = typeof ActionParameter.Type

export const HttpMethodName = Schema.Literals(["GET", "POST", "PUT", "PATCH", "DELETE"])

export const Action = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  http_method: HttpMethodName,
  is_active: Schema.Boolean,
  parameters: Schema.Array(ActionParameter)
}).annotate({ identifier: "Action" })
export type Action = typeof Action.Type

export const ActionList = Schema.Struct({ actions: Schema.Array(Action) })

export const ExecuteRequest = Schema.Struct({
  params: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "The action's parameters by name"
  })
})

const responseFields = {
  success: Schema.Boolean,
  status_code: Schema.Int,
  action_id: Schema.String,
  action_name: Schema.String,
  response: Schema.NullOr(Schema.Unknown).annotate({
    description: "The remote's parsed JSON (or text) response; on failure a string with the failure message"
  }),
  error: Schema.NullOr(Schema.String)
}

/** The result of a direct execution. */
export const ActionResponse = Schema.Struct(responseFields).annotate({ identifier: "ActionResponse" })
export type ActionResponse = typeof ActionResponse.Type

/**
 * 502: the remote call failed (non-2xx, timeout, connection error, open
 * circuit), or, with an unbound key, the action does not exist (spec rules 4–5).
 * The body is an ActionResponse with `success: false`.
 */
export class ActionFailed extends Schema.TaggedError<ActionFailed>()("ActionFailed", responseFields, {
  httpApiStatus: 502,
  description: "ActionResponse with success false: the remote call failed, or the action does not exist (unbound key)."
}) {}
