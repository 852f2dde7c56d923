/**
 * What makes a catalog action runnable, checked when an administrator saves
 * it rather than when a caller first runs it: unique parameter names, URL
 * placeholders that name declared parameters, an absolute http(s) URL, and
 * headers HTTP can carry whose secret references name valid secrets.
 *
 * The target's address is not checked here: the SSRF guard judges the
 * resolved address on every call (a name may resolve differently later).
 */
import { ActionAdmin, type Actions } from "@agent-platform/domain"
import { Schema } from "effect"
import { fillPlaceholders, isHeaderName, isHeaderValue, referencedSecrets, urlPlaceholders } from "./ActionRequest.ts"
import { namesHost } from "./OutboundGuard.ts"

export interface ActionDefinition {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly parameters: ReadonlyArray<Actions.ActionParameter>
}

const isSecretName = Schema.is(ActionAdmin.SecretName)

const parameterProblems = (parameters: ActionDefinition["parameters"]): Array<string> => {
  const seen = new Set<string>()
  const problems: Array<string> = []
  for (const { name } of parameters) {
    if (seen.has(name)) problems.push(`parameters: \`${name}\` is declared twice`)
    seen.add(name)
  }
  return problems
}

const urlProblems = (definition: ActionDefinition): Array<string> => {
  const declared = new Set(definition.parameters.map((p) => p.name))
  const problems = urlPlaceholders(definition.url)
    .filter((name) => !declared.has(name))
    .map((name) => `url: the placeholder \`{${name}}\` names no declared parameter`)
  const filled = fillPlaceholders(definition.url, "p")
  const url = URL.canParse(filled) ? new URL(filled) : undefined
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || !namesHost(filled)) {
    problems.push("url: must be an absolute http or https URL with a host (https://host/path)")
  }
  return problems
}

const headerProblems = (headers: ActionDefinition["headers"]): Array<string> =>
  Object.entries(headers).flatMap(([name, value]) => [
    ...(isHeaderName(name) ? [] : [`headers: \`${name}\` is not a valid HTTP header name`]),
    ...(isHeaderValue(value) ? [] : [`headers.${name}: line breaks and control characters cannot be sent`]),
    ...referencedSecrets({ [name]: value })
      .filter((secret) => !isSecretName(secret))
      .map((secret) => `headers.${name}: \`${secret}\` is not a secret name (UPPER_SNAKE_CASE)`)
  ])

/** One sentence per problem, naming the field; empty when the action can be saved. */
export const definitionProblems = (definition: ActionDefinition): Array<string> => [
  ...parameterProblems(definition.parameters),
  ...urlProblems(definition),
  ...headerProblems(definition.headers)
]
