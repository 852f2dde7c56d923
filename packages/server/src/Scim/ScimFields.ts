/**
 * Where each filterable SCIM attribute lives in SQL: a column of `users`
 * (alias `u`) or `scim_groups` (alias `g`), a key of `users.scim_attributes`,
 * or rows (a user's groups, a group's members). Only names found here reach
 * a query, as fixed SQL; values are always bound parameters (ScimFilter.ts).
 */
import { ScimSchemas } from "@agent-platform/domain"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import type { FieldTable, MultiField, ScalarField } from "./ScimFilter.ts"

type Sql = SqlClient.SqlClient
type AttributeDefinition = ScimSchemas.AttributeDefinition

const scalar = (type: ScimSchemas.AttributeType, caseExact: boolean, expr: Statement.Fragment): ScalarField => ({
  _tag: "Scalar",
  type,
  caseExact,
  expr
})

/** `a.b` → ["a", "b"], with the schema's URN prefix removed; undefined for another schema's attribute. */
const splitPath = (
  path: string,
  schemaUrn: string
): { readonly extension: boolean; readonly segments: Array<string> } => {
  const lower = path.toLowerCase()
  const extension = ScimSchemas.EnterpriseUserSchemaUrn.toLowerCase()
  if (lower.startsWith(`${extension}:`)) {
    return { extension: true, segments: path.slice(extension.length + 1).split(".") }
  }
  const core = lower.startsWith(`${schemaUrn.toLowerCase()}:`) ? path.slice(schemaUrn.length + 1) : path
  return { extension: false, segments: core.split(".") }
}

/** The values of a JSON array as rows; their sub-attributes as the definition types them. */
const jsonValues = (sql: Sql, definition: AttributeDefinition, array: Statement.Fragment): MultiField => ({
  _tag: "Multi",
  defaultSub: "value",
  exists: (alias, condition) =>
    sql`EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${array}) = 'array' THEN ${array} ELSE '[]'::jsonb END) AS ${
      sql(alias)
    } WHERE ${condition})`,
  sub: (alias, name) => {
    const sub = ScimSchemas.findAttribute(definition.subAttributes ?? [], name)
    if (sub === undefined || sub.type === "complex") return undefined
    return scalar(sub.type, sub.caseExact, sql`(${sql(alias)}.value ->> ${sub.name}::text)`)
  }
})

/** An attribute stored in a JSON document (`users.scim_attributes`, or its extension object). */
const jsonField = (
  sql: Sql,
  document: Statement.Fragment,
  definitions: ReadonlyArray<AttributeDefinition>,
  segments: Array<string>
) => {
  const definition = ScimSchemas.findAttribute(definitions, segments[0])
  if (definition === undefined || definition.mutability === "writeOnly" || segments.length > 2) return undefined
  const value = sql`(${document} -> ${definition.name}::text)`
  if (definition.multiValued) return segments.length === 1 ? jsonValues(sql, definition, value) : undefined
  if (definition.type !== "complex") {
    return segments.length === 1
      ? scalar(definition.type, definition.caseExact, sql`(${document} ->> ${definition.name}::text)`)
      : undefined
  }
  if (segments.length === 1) return undefined
  const sub = ScimSchemas.findAttribute(definition.subAttributes ?? [], segments[1])
  return sub === undefined ? undefined : scalar(sub.type, sub.caseExact, sql`(${value} ->> ${sub.name}::text)`)
}

const emailsDefinition = ScimSchemas.findAttribute(ScimSchemas.UserSchema.attributes, "emails")!

/** The filterable attributes of Users (alias `u`). */
export const userFields = (sql: Sql): FieldTable => {
  const columns: Record<string, ScalarField> = {
    "id": scalar("string", true, sql`u.id::text`),
    "externalid": scalar("string", true, sql`u.external_id`),
    "username": scalar("string", false, sql`COALESCE(u.scim_user_name, u.email)`),
    "displayname": scalar("string", false, sql`u.nombre`),
    "active": scalar("boolean", true, sql`u.active::text`),
    "name.givenname": scalar("string", false, sql`u.given_name`),
    "name.familyname": scalar("string", false, sql`u.family_name`),
    "meta.created": scalar("dateTime", true, sql`u.created_at`),
    "meta.lastmodified": scalar("dateTime", true, sql`u.updated_at`)
  }
  // Users created on the admin surface have no stored emails: their sign-in email is their one work email.
  const emails = jsonValues(
    sql,
    emailsDefinition,
    sql`COALESCE(u.scim_attributes -> 'emails', jsonb_build_array(jsonb_build_object('value', u.email, 'type', 'work', 'primary', true)))`
  )
  const groups: MultiField = {
    _tag: "Multi",
    defaultSub: "value",
    exists: (alias, condition) =>
      sql`EXISTS (SELECT 1 FROM scim_group_members ${sql(alias)} JOIN scim_groups ${sql(`${alias}_g`)} ON ${
        sql(`${alias}_g`)
      }.id = ${sql(alias)}.group_id WHERE ${sql(alias)}.user_id = u.id AND ${condition})`,
    sub: (alias, name) => {
      switch (name.toLowerCase()) {
        case "value":
          return scalar("string", true, sql`${sql(`${alias}_g`)}.id::text`)
        case "display":
          return scalar("string", false, sql`${sql(`${alias}_g`)}.display_name`)
        case "type":
          return scalar("string", false, sql`'direct'::text`)
        default:
          return undefined
      }
    }
  }
  return {
    resolve: (path) => {
      const { extension, segments } = splitPath(path, ScimSchemas.UserSchemaUrn)
      if (extension) {
        return jsonField(
          sql,
          sql`(u.scim_attributes -> ${ScimSchemas.EnterpriseUserSchemaUrn}::text)`,
          ScimSchemas.EnterpriseUserSchema.attributes,
          segments
        )
      }
      const key = segments.join(".").toLowerCase()
      if (columns[key] !== undefined) return columns[key]
      if (key === "emails") return emails
      if (key === "groups") return groups
      return jsonField(sql, sql`u.scim_attributes`, ScimSchemas.UserSchema.attributes, segments)
    }
  }
}

/** The filterable attributes of Groups (alias `g`). */
export const groupFields = (sql: Sql): FieldTable => {
  const columns: Record<string, ScalarField> = {
    "id": scalar("string", true, sql`g.id::text`),
    "externalid": scalar("string", true, sql`g.external_id`),
    "displayname": scalar("string", false, sql`g.display_name`),
    "meta.created": scalar("dateTime", true, sql`g.created_at`),
    "meta.lastmodified": scalar("dateTime", true, sql`g.updated_at`)
  }
  const members: MultiField = {
    _tag: "Multi",
    defaultSub: "value",
    exists: (alias, condition) =>
      sql`EXISTS (SELECT 1 FROM scim_group_members ${sql(alias)} JOIN users ${sql(`${alias}_u`)} ON ${
        sql(`${alias}_u`)
      }.id = ${sql(alias)}.user_id WHERE ${sql(alias)}.group_id = g.id AND ${condition})`,
    sub: (alias, name) => {
      switch (name.toLowerCase()) {
        case "value":
          return scalar("string", true, sql`${sql(alias)}.user_id::text`)
        case "display":
          return scalar("string", false, sql`${sql(`${alias}_u`)}.nombre`)
        case "type":
          return scalar("string", false, sql`'User'::text`)
        default:
          return undefined
      }
    }
  }
  return {
    resolve: (path) => {
      const key = splitPath(path, ScimSchemas.GroupSchemaUrn).segments.join(".").toLowerCase()
      if (columns[key] !== undefined) return columns[key]
      if (key === "members") return members
      return undefined
    }
  }
}
