/**
 * The SCIM schemas this service supports (RFC 7643 §4 and §8.7.1): the core
 * User, the Enterprise User extension and the core Group, declared once as
 * data. `/Schemas` serves them; the server reads them to accept what
 * identity providers send (attribute names are case-insensitive, unknown
 * attributes are dropped, `"False"` is a boolean), to type filters and sort
 * keys, and to enforce mutability.
 */

export const UserSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:User"
export const EnterpriseUserSchemaUrn = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
export const GroupSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:Group"

export type AttributeType =
  | "string"
  | "boolean"
  | "decimal"
  | "integer"
  | "dateTime"
  | "reference"
  | "complex"
  | "binary"
export type Mutability = "readOnly" | "readWrite" | "immutable" | "writeOnly"
export type Returned = "always" | "never" | "default" | "request"

/** One attribute of a schema, with the characteristics of RFC 7643 §2.2. */
export interface AttributeDefinition {
  readonly name: string
  readonly type: AttributeType
  readonly multiValued: boolean
  readonly description: string
  readonly required: boolean
  readonly caseExact: boolean
  readonly mutability: Mutability
  readonly returned: Returned
  readonly uniqueness: "none" | "server" | "global"
  readonly canonicalValues?: ReadonlyArray<string>
  readonly referenceTypes?: ReadonlyArray<string>
  readonly subAttributes?: ReadonlyArray<AttributeDefinition>
}

export interface SchemaDefinition {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly attributes: ReadonlyArray<AttributeDefinition>
}

type Options = Partial<Omit<AttributeDefinition, "name" | "type" | "description" | "subAttributes">>

const attribute = (
  name: string,
  type: AttributeType,
  description: string,
  options: Options = {}
): AttributeDefinition => ({
  name,
  type,
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...options
})

const complex = (
  name: string,
  description: string,
  subAttributes: ReadonlyArray<AttributeDefinition>,
  options: Options = {}
): AttributeDefinition => ({ ...attribute(name, "complex", description, options), subAttributes })

/** The sub-attributes shared by multi-valued attributes (RFC 7643 §2.4): value, display, type, primary. */
const multiValued = (
  name: string,
  description: string,
  types: ReadonlyArray<string>,
  value: AttributeDefinition = attribute("value", "string", `The ${name} value.`)
): AttributeDefinition =>
  complex(name, description, [
    value,
    attribute("display", "string", "A human-readable name, primarily used for display purposes."),
    attribute("type", "string", "A label indicating the attribute's function.", { canonicalValues: types }),
    attribute("primary", "boolean", "Whether this is the primary value; at most one value is primary.")
  ], { multiValued: true })

const userAttributes: ReadonlyArray<AttributeDefinition> = [
  attribute(
    "userName",
    "string",
    "Unique identifier for the User, typically used to sign in; unique in the tenant, compared case-insensitively.",
    {
      required: true,
      uniqueness: "server"
    }
  ),
  complex("name", "The components of the user's real name.", [
    attribute("formatted", "string", "The full name, formatted for display."),
    attribute("familyName", "string", "The family name (last name)."),
    attribute("givenName", "string", "The given name (first name)."),
    attribute("middleName", "string", "The middle name(s)."),
    attribute("honorificPrefix", "string", "Honorific prefix(es), e.g. 'Ms.'."),
    attribute("honorificSuffix", "string", "Honorific suffix(es), e.g. 'III'.")
  ]),
  attribute("displayName", "string", "The name of the User shown on the platform."),
  attribute("nickName", "string", "The casual way to address the user."),
  attribute("profileUrl", "reference", "A URI of an online profile of the User.", { referenceTypes: ["external"] }),
  attribute("title", "string", "The user's title, such as 'Vice President'."),
  attribute("userType", "string", "The relationship between the organization and the user, e.g. 'Employee'."),
  attribute("preferredLanguage", "string", "The user's preferred written or spoken language, e.g. 'en-US'."),
  attribute("locale", "string", "The user's default location for localization, e.g. 'en-US'."),
  attribute("timezone", "string", "The user's time zone in IANA format, e.g. 'Europe/Paris'."),
  attribute(
    "active",
    "boolean",
    "Whether the user may sign in. false ends the user's sessions at once and refuses sign-in with 403."
  ),
  attribute(
    "password",
    "string",
    "The user's cleartext password, checked against the tenant's password policy; never returned.",
    {
      mutability: "writeOnly",
      returned: "never",
      caseExact: true
    }
  ),
  multiValued(
    "emails",
    "Email addresses; the primary one (else the first, else an email-shaped userName) is the sign-in email.",
    ["work", "home", "other"]
  ),
  multiValued("phoneNumbers", "Phone numbers.", ["work", "home", "mobile", "fax", "pager", "other"]),
  multiValued("ims", "Instant messaging addresses.", ["aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo"]),
  multiValued(
    "photos",
    "URLs of photos of the User.",
    ["photo", "thumbnail"],
    attribute("value", "reference", "URL of a photo of the User.", { referenceTypes: ["external"] })
  ),
  complex("addresses", "Physical mailing addresses.", [
    attribute("formatted", "string", "The full mailing address, formatted for display."),
    attribute("streetAddress", "string", "The full street address component."),
    attribute("locality", "string", "The city or locality."),
    attribute("region", "string", "The state or region."),
    attribute("postalCode", "string", "The zip code or postal code."),
    attribute("country", "string", "The country name component."),
    attribute("type", "string", "A label indicating the address's function.", {
      canonicalValues: ["work", "home", "other"]
    }),
    attribute("primary", "boolean", "Whether this is the primary address.")
  ], { multiValued: true }),
  complex("groups", "The groups the user belongs to; managed through the Group resource.", [
    attribute("value", "string", "The identifier of the group.", { mutability: "readOnly" }),
    attribute("$ref", "reference", "The URI of the group.", { mutability: "readOnly", referenceTypes: ["Group"] }),
    attribute("display", "string", "The group's displayName.", { mutability: "readOnly" }),
    attribute("type", "string", "Direct membership.", { mutability: "readOnly", canonicalValues: ["direct"] })
  ], { multiValued: true, mutability: "readOnly" }),
  multiValued(
    "entitlements",
    "Entitlements of the user, as the identity provider names them (no effect on the platform).",
    []
  ),
  multiValued(
    "roles",
    "Roles of the user, as the identity provider names them (platform roles come from role mappings).",
    []
  ),
  multiValued(
    "x509Certificates",
    "DER-encoded X.509 certificates.",
    [],
    attribute("value", "binary", "A base64-encoded certificate.", { caseExact: true })
  )
]

const enterpriseAttributes: ReadonlyArray<AttributeDefinition> = [
  attribute("employeeNumber", "string", "Identifier of the user in the organization."),
  attribute("costCenter", "string", "Name of a cost center."),
  attribute("organization", "string", "Name of an organization."),
  attribute("division", "string", "Name of a division."),
  attribute("department", "string", "Name of a department."),
  complex("manager", "The user's manager.", [
    attribute("value", "string", "The id of the manager's User resource."),
    attribute("$ref", "reference", "The URI of the manager's User resource.", { referenceTypes: ["User"] }),
    attribute("displayName", "string", "The manager's displayName.", { mutability: "readOnly" })
  ])
]

const groupAttributes: ReadonlyArray<AttributeDefinition> = [
  attribute(
    "displayName",
    "string",
    "A human-readable name for the Group; unique in the tenant, compared case-insensitively. Role mappings refer to it.",
    {
      required: true,
      uniqueness: "server"
    }
  ),
  complex("members", "The members of the Group: users of the tenant.", [
    attribute("value", "string", "The id of a User of the tenant.", { mutability: "immutable" }),
    attribute("$ref", "reference", "The URI of the member.", { mutability: "immutable", referenceTypes: ["User"] }),
    attribute("display", "string", "The member's displayName.", { mutability: "readOnly" }),
    attribute("type", "string", "The type of the member; only User.", {
      mutability: "immutable",
      canonicalValues: ["User"]
    })
  ], { multiValued: true })
]

export const UserSchema: SchemaDefinition = {
  id: UserSchemaUrn,
  name: "User",
  description: "User Account: a user of the tenant, the same as on the admin surface.",
  attributes: userAttributes
}

export const EnterpriseUserSchema: SchemaDefinition = {
  id: EnterpriseUserSchemaUrn,
  name: "EnterpriseUser",
  description: "Enterprise User: stored and returned as sent.",
  attributes: enterpriseAttributes
}

export const GroupSchema: SchemaDefinition = {
  id: GroupSchemaUrn,
  name: "Group",
  description: "Group: a set of users of the tenant; role mappings grant roles by group.",
  attributes: groupAttributes
}

export const schemaDefinitions: ReadonlyArray<SchemaDefinition> = [UserSchema, EnterpriseUserSchema, GroupSchema]

/** The attributes every resource has besides its schema's (RFC 7643 §3.1). */
export const commonAttributes: ReadonlyArray<AttributeDefinition> = [
  attribute("id", "string", "Identifier of the resource, issued by the service.", {
    caseExact: true,
    mutability: "readOnly",
    returned: "always",
    uniqueness: "server"
  }),
  attribute("externalId", "string", "Identifier of the resource in the identity provider.", { caseExact: true }),
  complex("meta", "Resource metadata.", [
    attribute("resourceType", "string", "The name of the resource type.", { caseExact: true, mutability: "readOnly" }),
    attribute("created", "dateTime", "When the resource was added.", { mutability: "readOnly" }),
    attribute("lastModified", "dateTime", "When the resource was last changed.", { mutability: "readOnly" }),
    attribute("location", "reference", "The URI of the resource.", { caseExact: true, mutability: "readOnly" }),
    attribute("version", "string", "The version of the resource, as in its ETag.", {
      caseExact: true,
      mutability: "readOnly"
    })
  ], { mutability: "readOnly" })
]

/** Finds an attribute by name, case-insensitively (RFC 7644 §3.10). */
export const findAttribute = (
  attributes: ReadonlyArray<AttributeDefinition>,
  name: string
): AttributeDefinition | undefined => {
  const lower = name.toLowerCase()
  return attributes.find((candidate) => candidate.name.toLowerCase() === lower)
}
