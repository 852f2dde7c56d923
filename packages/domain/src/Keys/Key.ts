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
  created_by: Schema.NullOr(Schema.String).annotate({
    description: "The user who owns the key; it works only while that user is active, unblocked and allowed its scopes"
  }),
  rate_limit_rpm: Schema.Int,
  is_active: Schema.Boolean,
  last_used_at: Schema.NullOr(Schema.String).annotate({ description: "ISO 8601; updated at most once a minute" }),
  created_at: Schema.String
}).annotate({ identifier: "ApiKey" })
export type ApiKeyListItem = typeof ApiKeyListItem.Type

export const ApiKeyList = Schema.Struct({ keys: Schema.Array(ApiKeyListItem) }).annotate({
  examples: [{
    keys: [{
      id: "3a4b5c6d-7e8f-4a01-9b23-c4d5e6f7a8b9",
      name: "helpdesk integration",
      key_prefix: "sk_live_1a2b3c4d",
      scopes: "[\"agents:read\",\"chat\"]",
      space_id: null,
      created_by: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
      rate_limit_rpm: 300,
      is_active: true,
      last_used_at: "2026-01-15T09:30:00.000Z",
      created_at: "2026-01-10T08:00:00.000Z"
    }]
  }]
})

export const CreateApiKey = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  space_id: Schema.optionalKey(Schema.NullOr(Schema.String)).annotate({
    description: "Bind the key to one space of the tenant: it can then only execute actions of that space's agents"
  }),
  scopes: Schema.Array(ScopeName).check(Schema.isMinLength(1), Schema.isMaxLength(Scopes.length)),
  rate_limit_rpm: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(100_000))
  ).annotate({ description: "Requests per minute for the key; default 300" })
}).annotate({ examples: [{ name: "helpdesk integration", scopes: ["agents:read", "chat"] }] })
export type CreateApiKey = typeof CreateApiKey.Type

/** The creation result: the only time the full secret is shown. */
export const ApiKeyCreated = Schema.Struct({
  id: Schema.String,
  key: Schema.String.annotate({ description: "The full secret `sk_live_` + 64 hex; shown once, never again" }),
  prefix: Schema.String,
  message: Schema.String
}).annotate({
  identifier: "ApiKeyCreated",
  examples: [{
    id: "3a4b5c6d-7e8f-4a01-9b23-c4d5e6f7a8b9",
    key: "sk_live_1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
    prefix: "sk_live_1a2b3c4d",
    message: "Store this key now: it is not shown again."
  }]
})

export const ApiKeyRevoked = Schema.Struct({ success: Schema.Literal(true), message: Schema.String }).annotate({
  examples: [{ success: true, message: "API key revoked" }]
})
