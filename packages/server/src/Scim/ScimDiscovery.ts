/**
 * The discovery resources of RFC 7644 §4: what this service supports, its
 * schemas (served from the same definitions the service validates with) and
 * its resource types.
 */
import { Scim, ScimSchemas } from "@agent-platform/domain"

export const serviceProviderConfig = (baseUrl: string) => ({
  schemas: [Scim.ServiceProviderConfigUrn],
  documentationUri: `${baseUrl.replace(/\/v1\/scim$/, "")}/docs`,
  ...Scim.serviceProviderFeatures,
  authenticationSchemes: [Scim.bearerScheme],
  meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` }
})

const schemaResource = (definition: ScimSchemas.SchemaDefinition, baseUrl: string) => ({
  schemas: [Scim.SchemaUrn],
  id: definition.id,
  name: definition.name,
  description: definition.description,
  attributes: definition.attributes as unknown as ReadonlyArray<Record<string, unknown>>,
  meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${definition.id}` }
})

export const schemas = (baseUrl: string) =>
  ScimSchemas.schemaDefinitions.map((definition) => schemaResource(definition, baseUrl))

export const findSchema = (id: string, baseUrl: string) => {
  const definition = ScimSchemas.schemaDefinitions.find((candidate) => candidate.id.toLowerCase() === id.toLowerCase())
  return definition === undefined ? undefined : schemaResource(definition, baseUrl)
}

export const resourceTypes = (baseUrl: string) => [
  {
    schemas: [Scim.ResourceTypeUrn],
    id: "User",
    name: "User",
    endpoint: "/Users",
    description: "A user of the tenant",
    schema: ScimSchemas.UserSchemaUrn,
    schemaExtensions: [{ schema: ScimSchemas.EnterpriseUserSchemaUrn, required: false }],
    meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/User` }
  },
  {
    schemas: [Scim.ResourceTypeUrn],
    id: "Group",
    name: "Group",
    endpoint: "/Groups",
    description: "A group of the tenant's users",
    schema: ScimSchemas.GroupSchemaUrn,
    schemaExtensions: [],
    meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Group` }
  }
]
