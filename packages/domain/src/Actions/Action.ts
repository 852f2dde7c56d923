/** Action schemas (spec: "Action (catalog entry)", "ActionResponse"). */
import { Schema } from "effect"
import { AnswerError } from "../AnswerError.ts"
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

export const ActionList = Schema.Struct({ actions: Schema.Array(Action) }).annotate({
  examples: [{
    actions: [{
      id: "9d2f6c1a-7b3e-4f80-8a91-2b3c4d5e6f70",
      name: "Create ticket",
      description: "Opens a ticket in the helpdesk",
      http_method: "POST",
      is_active: true,
      parameters: [{ name: "subject", type: "string", description: "One line about the problem", required: true }]
    }]
  }]
})

export const ExecuteRequest = Schema.Struct({
  params: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "The action's parameters by name"
  })
}).annotate({ examples: [{ params: { subject: "Printer on floor 3 is jammed", priority: 2 } }] })

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
export const ActionResponse = Schema.Struct(responseFields).annotate({
  identifier: "ActionResponse",
  examples: [{
    success: true,
    status_code: 201,
    action_id: "9d2f6c1a-7b3e-4f80-8a91-2b3c4d5e6f70",
    action_name: "Create ticket",
    response: { ticket: "HD-1042" },
    error: null
  }]
})
export type ActionResponse = typeof ActionResponse.Type

/**
 * 502: the remote call failed (non-2xx, timeout, connection error, open
 * circuit), or, with an unbound key, the action does not exist (spec rules 4–5).
 * The body is an ActionResponse with `success: false`.
 */
export class ActionFailed extends AnswerError<ActionFailed>()("ActionFailed", responseFields, {
  httpApiStatus: 502,
  description: "ActionResponse with success false: the remote call failed, or the action does not exist (unbound key)."
}) {}

/** A 502 body, for the documentation. */
export const actionFailedExample = {
  _tag: "ActionFailed",
  success: false,
  status_code: 503,
  action_id: "9d2f6c1a-7b3e-4f80-8a91-2b3c4d5e6f70",
  action_name: "Create ticket",
  response: "the remote system answered HTTP 503: maintenance",
  error: "the remote system answered HTTP 503: maintenance"
} satisfies typeof ActionFailed.Encoded
