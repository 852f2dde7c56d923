/** Action catalog administration schemas (admin surface). */
import { Schema } from "effect"
import { StorableString } from "../Text.ts"
import { ActionParameter, HttpMethodName } from "./Action.ts"

const Name = StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(100))
const Description = StorableString.check(Schema.isMaxLength(2000))
const Url = StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({
  description: "May hold `{param}` placeholders, filled (URL-encoded) from the call's params"
})
const Headers = Schema.Record(Schema.String, Schema.String.check(Schema.isMaxLength(4096))).annotate({
  description:
    "Header values may reference tenant secrets as `{{secret:NAME}}`; secrets are stored encrypted and never returned"
})

/**
 * The human-in-the-loop mode of an action: `auto` runs when asked; `confirm`
 * waits in chat for a human's explicit "yes" (direct API-key calls bypass the
 * chat and are flagged by the compliance HITL map); `shadow` records the
 * resolved request and does not make the remote call, and the answer says so.
 */
export const HitlMode = Schema.Literals(["auto", "confirm", "shadow"])
export type HitlMode = typeof HitlMode.Type

export const AdminAction = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  http_method: HttpMethodName,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  parameters: Schema.Array(ActionParameter),
  is_active: Schema.Boolean,
  requires_confirmation: Schema.Boolean.annotate({ description: "`hitl_mode` is `confirm`" }),
  hitl_mode: HitlMode,
  hitl_version: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
    description:
      "Starts at 1; every change of `hitl_mode` stores a snapshot with the next version and an admin_audit_log entry"
  }),
  created_at: Schema.String
}).annotate({ identifier: "AdminAction" })
export type AdminAction = typeof AdminAction.Type

export const CreateAction = Schema.Struct({
  name: Name,
  description: Description,
  http_method: HttpMethodName,
  url: Url,
  headers: Schema.optionalKey(Headers),
  parameters: Schema.Array(ActionParameter).check(Schema.isMaxLength(50)),
  is_active: Schema.Boolean,
  requires_confirmation: Schema.optionalKey(Schema.Boolean).annotate({
    description: "Legacy: true is `hitl_mode: confirm`, false is `auto`; do not send both with different meanings"
  }),
  hitl_mode: Schema.optionalKey(HitlMode)
})

export const UpdateAction = Schema.Struct({
  name: Schema.optionalKey(Name),
  description: Schema.optionalKey(Description),
  http_method: Schema.optionalKey(HttpMethodName),
  url: Schema.optionalKey(Url),
  headers: Schema.optionalKey(Headers),
  parameters: Schema.optionalKey(Schema.Array(ActionParameter).check(Schema.isMaxLength(50))),
  is_active: Schema.optionalKey(Schema.Boolean),
  requires_confirmation: Schema.optionalKey(Schema.Boolean).annotate({
    description: "Legacy: true is `hitl_mode: confirm`, false is `auto`; do not send both with different meanings"
  }),
  hitl_mode: Schema.optionalKey(HitlMode)
})

export const SecretName = Schema.String.check(
  Schema.isPattern(/^[A-Z][A-Z0-9_]{0,63}$/, { message: "must be UPPER_SNAKE_CASE (max 64)" })
)

export const SecretInfo = Schema.Struct({ name: Schema.String, updated_at: Schema.String })

export const PutSecret = Schema.Struct({ value: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(8192)) })
