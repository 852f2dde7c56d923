/**
 * From an action of the catalog and the caller's params to the outbound
 * request: params checked against the action's declared parameters, `{param}`
 * placeholders of the URL filled (URL-encoded), the other params sent as the
 * query string (GET, DELETE) or a JSON body (POST, PUT, PATCH), and
 * `{{secret:NAME}}` references in header values found and filled.
 *
 * Params the action does not declare are not forwarded: the action's
 * administrator decides what reaches the remote system, not the caller.
 */
import type { Actions } from "@agent-platform/domain"
import { Result } from "effect"
import type { OutboundMethod, OutboundRequest } from "./OutboundHttp.ts"

/** What the runner needs of a catalog entry. */
export interface ActionDefinition {
  readonly id: string
  readonly name: string
  readonly http_method: OutboundMethod
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly parameters: ReadonlyArray<Actions.ActionParameter>
}

export type Params = Readonly<Record<string, unknown>>

const article = (
  type: Actions.ParameterType
) => (type === "integer" || type === "object" || type === "array" ? "an" : "a")

const typeOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number" && Number.isInteger(value)
    ? "integer"
    : typeof value

const hasType = (value: unknown, type: Actions.ParameterType): boolean => {
  switch (type) {
    case "string":
      return typeof value === "string"
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "boolean":
      return typeof value === "boolean"
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value)
    case "array":
      return Array.isArray(value)
  }
}

/** A param counts as given when it is present and not null. */
const given = (params: Params, name: string) =>
  Object.hasOwn(params, name) && params[name] !== undefined && params[name] !== null

/** One sentence per missing or mistyped parameter; empty when the params fit the action. */
export const paramProblems = (parameters: ReadonlyArray<Actions.ActionParameter>, params: Params): Array<string> =>
  parameters.flatMap((parameter) => {
    if (!given(params, parameter.name)) {
      return parameter.required ? [`missing required parameter \`${parameter.name}\` (${parameter.type})`] : []
    }
    const value = params[parameter.name]
    return hasType(value, parameter.type)
      ? []
      : [`parameter \`${parameter.name}\` must be ${article(parameter.type)} ${parameter.type}, got ${typeOf(value)}`]
  })

const placeholder = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** The parameter names the URL's `{param}` placeholders use, in order, without repeats. */
export const urlPlaceholders = (
  url: string
): ReadonlyArray<string> => [...new Set([...url.matchAll(placeholder)].map((match) => match[1]))]

/** The URL with every placeholder replaced by `value` (to check what remains is a URL). */
export const fillPlaceholders = (url: string, value: string): string => url.replace(placeholder, value)

const asText = (value: unknown) => (typeof value === "object" ? JSON.stringify(value) : String(value))

/**
 * The request for valid params, or the sentences naming what is missing: a
 * URL placeholder whose param is absent is one (the parameter may be optional
 * in the catalog and still needed by the URL).
 */
export const buildRequest = (
  action: ActionDefinition,
  params: Params
): Result.Result<OutboundRequest, Array<string>> => {
  const declared = new Map(action.parameters.map((p) => [p.name, p]))
  const used = new Set<string>()
  const problems: Array<string> = []
  const url = action.url.replace(placeholder, (_, name: string) => {
    used.add(name)
    if (!declared.has(name) || !given(params, name)) {
      problems.push(`parameter \`${name}\` is needed by the action's URL but missing`)
      return ""
    }
    return encodeURIComponent(asText(params[name]))
  })
  if (problems.length > 0) return Result.fail(problems)
  const rest = action.parameters.filter((p) => !used.has(p.name) && given(params, p.name))
  const hasAccept = Object.keys(action.headers).some((name) => name.toLowerCase() === "accept")
  const headers = hasAccept
    ? action.headers
    : { accept: "application/json, text/plain;q=0.9, */*;q=0.8", ...action.headers }
  if (action.http_method === "GET" || action.http_method === "DELETE") {
    if (!URL.canParse(url)) return Result.succeed({ method: action.http_method, url, headers })
    const target = new URL(url)
    for (const parameter of rest) {
      const value = params[parameter.name]
      for (const item of Array.isArray(value) ? value : [value]) {
        target.searchParams.append(parameter.name, asText(item))
      }
    }
    return Result.succeed({ method: action.http_method, url: target.href, headers })
  }
  const body = Object.fromEntries(rest.map((p) => [p.name, params[p.name]]))
  return Result.succeed({
    method: action.http_method,
    url,
    headers,
    body: { contentType: "application/json", text: JSON.stringify(body) }
  })
}

const secretReference = /\{\{secret:([A-Za-z0-9_]+)\}\}/g

/** The tenant secrets the header values reference. */
export const referencedSecrets = (headers: Readonly<Record<string, string>>): ReadonlyArray<string> => [
  ...new Set(Object.values(headers).flatMap((value) => [...value.matchAll(secretReference)].map((match) => match[1])))
]

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/

/** Whether HTTP can carry this header name, and this value (no line breaks or control characters). */
export const isHeaderName = (name: string): boolean => headerName.test(name)
export const isHeaderValue = (value: string): boolean => headerValue.test(value)

/**
 * Header values with their secret references replaced, or the sentence
 * naming a secret that is not set or a header that cannot be sent (a secret
 * with a line break would otherwise split the request).
 */
export const fillSecrets = (
  headers: Readonly<Record<string, string>>,
  secrets: ReadonlyMap<string, string>
): Result.Result<Record<string, string>, string> => {
  const filled: Record<string, string> = {}
  for (const [name, template] of Object.entries(headers)) {
    if (!headerName.test(name)) {
      return Result.fail(`the action's header name \`${name}\` is not a valid HTTP header name`)
    }
    let missing: string | undefined
    const value = template.replace(secretReference, (_, secret: string) => {
      const found = secrets.get(secret)
      if (found === undefined) missing ??= secret
      return found ?? ""
    })
    if (missing !== undefined) {
      return Result.fail(
        `the action's header \`${name}\` references the tenant secret ${missing}, which is not set; set it with PUT /api/admin/secrets/${missing}`
      )
    }
    if (!headerValue.test(value)) {
      return Result.fail(`the action's header \`${name}\` holds characters HTTP headers cannot carry`)
    }
    filled[name] = value
  }
  return Result.succeed(filled)
}
