/** The admin surface: users, spaces, tenant flags and tenants (beyond the spec; session JWT). */
import { Schema } from "effect"
import { Email, Password, RoleId } from "../Auth/Session.ts"
import { isNotBlank, StorableString } from "../Text.ts"

export const AdminUser = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  nombre: Schema.String,
  role_id: RoleId,
  active: Schema.Boolean,
  blocked: Schema.Boolean.annotate({
    description: "Blocked by an administrator: no sign-in, sessions ended, keys stopped"
  }),
  locked_until: Schema.NullOr(Schema.String).annotate({
    description:
      "Locked out after repeated failed sign-ins until this time (ISO 8601): new sign-ins are refused like a wrong password; live sessions and keys go on. `blocked: false` clears it."
  }),
  must_change_password: Schema.Boolean,
  mfa_enabled: Schema.Boolean,
  created_at: Schema.String,
  last_login_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AdminUser" })
export type AdminUser = typeof AdminUser.Type

export const CreateUser = Schema.Struct({
  email: Email,
  nombre: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  password: Password,
  role_id: RoleId
})

export const UpdateUser = Schema.Struct({
  role_id: Schema.optionalKey(RoleId),
  active: Schema.optionalKey(Schema.Boolean),
  blocked: Schema.optionalKey(Schema.Boolean),
  must_change_password: Schema.optionalKey(Schema.Boolean)
})

export const SpaceCode = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9_-]{0,62}$/, { message: "must be lowercase letters, digits, - or _ (max 63)" })
)

export const Space = Schema.Struct({ id: Schema.String, code: Schema.String, name: Schema.String }).annotate({
  identifier: "Space"
})

export const CreateSpace = Schema.Struct({
  code: SpaceCode,
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))
})

export const TenantFlags = Schema.Struct({
  feature_war_rooms: Schema.Boolean,
  feature_compliance_pack: Schema.Boolean,
  feature_decision_records: Schema.Boolean,
  push_notifications: Schema.Boolean
}).annotate({ identifier: "TenantFlags" })
export type TenantFlags = typeof TenantFlags.Type

export const UpdateTenantFlags = Schema.Struct({
  feature_war_rooms: Schema.optionalKey(Schema.Boolean),
  feature_compliance_pack: Schema.optionalKey(Schema.Boolean),
  feature_decision_records: Schema.optionalKey(Schema.Boolean),
  push_notifications: Schema.optionalKey(Schema.Boolean)
})

/** Sign-in takes a tenant by name or id: a name shaped like an id would be ambiguous. */
const isNotUuidShaped = Schema.makeFilter((text: string) =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text.trim())
    ? "must not look like a tenant id (sign-in takes a tenant by name or id)"
    : undefined
)

export const CreateTenant = Schema.Struct({
  name: StorableString.check(Schema.isMinLength(1), Schema.isMaxLength(200), isNotBlank, isNotUuidShaped),
  admin_email: Email,
  admin_password: Password
})

export const Tenant = Schema.Struct({ id: Schema.String, name: Schema.String }).annotate({ identifier: "Tenant" })
