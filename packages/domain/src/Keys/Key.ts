/** API key schemas (spec: "API key (list item)", "API key creation result"). */
import { Schema } from "effect"
import { Scopes } from "../Security.ts"

export const ScopeName = Schema.Literals(Scopes)

/** A key as listed; the secret itself is never listed. */
export const ApiKeyListItem = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_prefix: Schema.String.annotate({ description: "First characters of the key, e.g. `sk_live_1a2b3c4d`" }),
  scopes: Schema.String.annotate({ description: "A JSON-encoded array of scope names, delivered as a string" }),
  space_id: Schema.NullOr(Schema.String).annotate({ description: "The space the key is bound to, if any" }),
  rate_limit_rpm: Schema.Int,
  is_active: Schema.Boolean,
  last_used_at: Schema.NullOr(Schema.String).annotate({ description: "ISO 8601; updated at most once a minute" }),
  created_at: Schema.String
}).annotate({ identifier: "ApiKey" })
export type ApiKeyListItem = typeof ApiKeyListItem.Type

export const ApiKeyList = Schema.Struct({ keys: Schema.Array(ApiKeyListItem) })

export const CreateApiKey = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  space_id: Schema.optionalKey(Schema.NullOr(Schema.String)).annotate({
    description: "Bind the key to one space of the tenant: it can then only execute actions of that space's agents"
  }),
  scopes: Schema.Array(ScopeName).check(Schema.isMinLength(1), Schema.isMaxLength(Scopes.length)),
  rate_limit_rpm: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(100_000))
  ).annotate({ description: "Requests per minute for the key; default 300" })
})
export type CreateApiKey = typeof CreateApiKey.Type

/** The creation result: the only time the full secret is shown. */
export const ApiKeyCreated = Schema.Struct({
  id: Schema.String,
  key: Schema.String.annotate({ description: "The full secret `sk_live_` + 64 hex; shown once, never again" }),
  prefix: Schema.String,
  message: Schema.String
}).annotate({ identifier: "ApiKeyCreated" })

export const ApiKeyRevoked = Schema.Struct({ success: Schema.Literal(true), message: Schema.String })
