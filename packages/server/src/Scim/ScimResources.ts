/**
 * Users and groups as SCIM resources: their representation (with `meta`
 * and a version), the versions `If-Match` is checked against, and the
 * reverse: what a normalized User body means for the platform's user row.
 */
import { type Role, Scim, ScimSchemas } from "@agent-platform/domain"
import { createHash } from "node:crypto"
import { canonicalJson } from "../Audit/CanonicalJson.ts"
import type { NormalizedResource } from "./ScimAttributes.ts"

/** The user columns SCIM reads. */
export interface ScimUserRow {
  readonly id: string
  readonly email: string
  readonly nombre: string
  readonly role_id: Role
  readonly active: boolean
  readonly blocked: boolean
  readonly external_id: string | null
  readonly given_name: string | null
  readonly family_name: string | null
  readonly scim_user_name: string | null
  readonly scim_attributes: Record<string, unknown>
  readonly scim_managed: boolean
  readonly created_at: Date
  readonly updated_at: Date
  /** The user's groups, `[{value, display}]`. */
  readonly scim_groups: ReadonlyArray<{ readonly value: string; readonly display: string }>
}

export interface ScimGroupRow {
  readonly id: string
  readonly display_name: string
  readonly external_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
  /** `[{value, display}]`, or undefined when not read (`excludedAttributes=members`). */
  readonly members: ReadonlyArray<{ readonly value: string; readonly display: string }> | undefined
  /** A digest of the member ids, read even when the members are not. */
  readonly members_digest: string | null
}

/** A weak entity tag over the resource's content: it changes exactly when the representation does. */
const versionOf = (resource: Record<string, unknown>) =>
  `W/"${createHash("sha256").update(canonicalJson(resource)).digest("hex").slice(0, 32)}"`

const withMeta = <A extends Record<string, unknown>>(
  resource: A,
  meta: {
    readonly resourceType: string
    readonly created: Date
    readonly lastModified: Date
    readonly location: string
  },
  versioned: Record<string, unknown> = resource
) => {
  const created = meta.created.toISOString()
  const lastModified = meta.lastModified.toISOString()
  // The location depends on the host the client used; the version must not.
  const version = versionOf({ ...versioned, meta: { resourceType: meta.resourceType, created, lastModified } })
  return {
    ...resource,
    meta: { resourceType: meta.resourceType, created, lastModified, location: meta.location, version }
  }
}

const defined = (object: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined && value !== null))

/** The sign-in email of a user created on the admin surface, as its only email. */
const emailsOf = (row: ScimUserRow) => row.scim_attributes.emails ?? [{ value: row.email, type: "work", primary: true }]

/** The given and family names joined, else the display name: `name.formatted` when none was sent. */
const derivedFormatted = (given: unknown, family: unknown, displayName: string): string => {
  const parts = [given, family].filter((part): part is string => typeof part === "string" && part.trim() !== "")
  return parts.length > 0 ? parts.join(" ") : displayName
}

/**
 * The user's `name.formatted`, which every User carries (spec: SCIM resources):
 * the one the identity provider sent, else the given and family names, else
 * the display name (a user created on the admin surface has only that).
 */
const formattedName = (row: ScimUserRow, stored: Record<string, unknown>): string =>
  typeof stored.formatted === "string" && stored.formatted.trim() !== ""
    ? stored.formatted
    : derivedFormatted(row.given_name, row.family_name, row.nombre)

export const userResource = (row: ScimUserRow, baseUrl: string): Scim.ScimUser => {
  const { emails: _emails, name: storedName, [ScimSchemas.EnterpriseUserSchemaUrn]: enterprise, ...rest } =
    row.scim_attributes
  const stored = typeof storedName === "object" && storedName !== null ? storedName as Record<string, unknown> : {}
  const name = defined({
    ...stored,
    formatted: formattedName(row, stored),
    givenName: row.given_name,
    familyName: row.family_name
  })
  const hasEnterprise = typeof enterprise === "object" && enterprise !== null && Object.keys(enterprise).length > 0
  const resource = defined({
    schemas: hasEnterprise
      ? [ScimSchemas.UserSchemaUrn, ScimSchemas.EnterpriseUserSchemaUrn]
      : [ScimSchemas.UserSchemaUrn],
    id: row.id,
    externalId: row.external_id,
    userName: row.scim_user_name ?? row.email,
    name,
    displayName: row.nombre,
    ...rest,
    emails: emailsOf(row),
    active: row.active,
    groups: row.scim_groups.length === 0
      ? undefined
      : row.scim_groups.map((group) => ({
        value: group.value,
        display: group.display,
        $ref: `${baseUrl}/Groups/${group.value}`,
        type: "direct"
      })),
    [ScimSchemas.EnterpriseUserSchemaUrn]: hasEnterprise ? enterprise : undefined
  })
  return withMeta(resource, {
    resourceType: "User",
    created: row.created_at,
    lastModified: row.updated_at,
    location: `${baseUrl}/Users/${row.id}`
  }) as Scim.ScimUser
}

export const groupResource = (row: ScimGroupRow, baseUrl: string): Scim.ScimGroup => {
  const resource = defined({
    schemas: [ScimSchemas.GroupSchemaUrn],
    id: row.id,
    externalId: row.external_id,
    displayName: row.display_name,
    members: row.members === undefined || row.members.length === 0
      ? undefined
      : row.members.map((member) => ({
        value: member.value,
        display: member.display,
        $ref: `${baseUrl}/Users/${member.value}`,
        type: "User"
      }))
  })
  // The version covers the member ids through their digest, so a list without the members
  // (excludedAttributes=members) shows the same version as a full read.
  const { members: _members, ...rest } = resource
  const versioned = { ...rest, members: row.members_digest }
  return withMeta(resource, {
    resourceType: "Group",
    created: row.created_at,
    lastModified: row.updated_at,
    location: `${baseUrl}/Groups/${row.id}`
  }, versioned) as Scim.ScimGroup
}

/**
 * Whether `If-Match` lets a write go ahead (RFC 7232 §3.1): absent, `*`, or
 * one of its tags equal to the current version (weak or strong form).
 */
export const ifMatchAllows = (header: string | undefined, version: string): boolean => {
  if (header === undefined || header.trim() === "") return true
  const bare = (tag: string) => tag.trim().replace(/^W\//i, "")
  return header.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(version))
}

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** What a User body sets on the platform's user row. */
export interface UserWrite {
  readonly userName: string
  readonly email: string
  readonly nombre: string
  readonly givenName: string | null
  readonly familyName: string | null
  readonly externalId: string | null
  readonly active: boolean
  /** Everything else, as stored in `scim_attributes`. */
  readonly attributes: Record<string, unknown>
}

type Emails = ReadonlyArray<{ readonly value?: unknown; readonly primary?: unknown }>

/**
 * The row a normalized User means. The sign-in email is the primary email,
 * else the first, else an email-shaped userName, else (on a replacement) the
 * current one; a user with none at all is a 400.
 */
export const userWrite = (resource: NormalizedResource, currentEmail?: string): UserWrite | Scim.ScimBadRequest => {
  const { userName, displayName, active, password: _password, name, ...attributes } = resource.attributes
  if (typeof userName !== "string" || userName.trim() === "") {
    return Scim.ScimBadRequest.of("invalidValue", "userName is required: send the user's unique sign-in name.")
  }
  if (userName.length > 256) return Scim.ScimBadRequest.of("invalidValue", "userName must be at most 256 characters.")
  const emails = (attributes.emails ?? []) as Emails
  const chosen = emails.find((email) => email.primary === true) ?? emails[0]
  const email = typeof chosen?.value === "string"
    ? chosen.value.trim()
    : emailShape.test(userName.trim())
    ? userName.trim()
    : currentEmail
  if (email === undefined) {
    return Scim.ScimBadRequest.of(
      "invalidValue",
      "The user needs an email address to sign in: send emails [{value, primary: true}] or a userName that is an email address."
    )
  }
  if (!emailShape.test(email) || email.length > 254) {
    return Scim.ScimBadRequest.of(
      "invalidValue",
      `${JSON.stringify(email)} is not an email address: the primary email is the user's sign-in email.`
    )
  }
  const { givenName, familyName, ...otherNames } = (name ?? {}) as Record<string, unknown>
  const given = typeof givenName === "string" ? givenName : null
  const family = typeof familyName === "string" ? familyName : null
  const formatted = typeof otherNames.formatted === "string" ? otherNames.formatted : undefined
  const nombre = typeof displayName === "string" && displayName.trim() !== ""
    ? displayName
    : formatted ?? ([given, family].filter((part) => part !== null && part !== "").join(" ") || userName)
  const enterprise = resource.extensions[ScimSchemas.EnterpriseUserSchemaUrn]
  return {
    userName,
    email,
    nombre,
    givenName: given,
    familyName: family,
    externalId: resource.externalId ?? null,
    active: typeof active === "boolean" ? active : true,
    attributes: {
      ...attributes,
      ...(Object.keys(otherNames).length === 0 ? {} : { name: otherNames }),
      ...(enterprise === undefined || Object.keys(enterprise).length === 0
        ? {}
        : { [ScimSchemas.EnterpriseUserSchemaUrn]: enterprise })
    }
  }
}

/** The patchable document of a user: its representation without read-only metadata. */
export const patchableUser = (resource: Scim.ScimUser): Record<string, unknown> => {
  const { groups: _groups, meta: _meta, name, ...rest } = resource
  // A `formatted` the names give anyway is not the provider's own: left out, it follows a changed name.
  const { formatted, ...names } = name ?? {}
  const derived = formatted === derivedFormatted(names.givenName, names.familyName, resource.displayName ?? "")
  return { ...rest, name: derived ? names : name, meta: { resourceType: "User" } }
}
