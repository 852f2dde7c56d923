/**
 * SCIM over raw HTTP, the way Okta's and Entra's provisioning agents call
 * it: a Bearer API key with the `scim` scope and `application/scim+json`
 * bodies, against `/v1/scim` (or `/api/v1/scim`).
 */
import type * as Sdk from "@agent-platform/sdk"
import { Effect } from "effect"
import { createKey, http, type HttpResult, type TestServer } from "./TestServer.ts"

export const UserUrn = "urn:ietf:params:scim:schemas:core:2.0:User"
export const GroupUrn = "urn:ietf:params:scim:schemas:core:2.0:Group"
export const EnterpriseUrn = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
export const PatchOpUrn = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
export const ErrorUrn = "urn:ietf:params:scim:api:messages:2.0:Error"
export const ListUrn = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
export const SearchRequestUrn = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

export interface ScimClient {
  readonly key: string
  readonly keyId: string
  readonly get: (path: string, headers?: Record<string, string>) => Effect.Effect<HttpResult, never, TestServer>
  readonly post: (
    path: string,
    body: unknown,
    headers?: Record<string, string>
  ) => Effect.Effect<HttpResult, never, TestServer>
  readonly put: (
    path: string,
    body: unknown,
    headers?: Record<string, string>
  ) => Effect.Effect<HttpResult, never, TestServer>
  readonly patch: (
    path: string,
    body: unknown,
    headers?: Record<string, string>
  ) => Effect.Effect<HttpResult, never, TestServer>
  readonly delete: (path: string, headers?: Record<string, string>) => Effect.Effect<HttpResult, never, TestServer>
}

/**
 * A SCIM client with its own key (`rate_limit_rpm` optional), under `base`
 * (default `/v1/scim`), created by the bootstrap admin or by `as`.
 */
export const scimClient = (
  options: { readonly rate_limit_rpm?: number; readonly base?: string; readonly as?: Sdk.Connected } = {}
): Effect.Effect<ScimClient, never, TestServer> =>
  Effect.gen(function*() {
    const { id, key } = yield* createKey(["scim"], {
      ...(options.rate_limit_rpm === undefined ? {} : { rate_limit_rpm: options.rate_limit_rpm }),
      ...(options.as === undefined ? {} : { as: options.as })
    })
    const base = options.base ?? "/v1/scim"
    const call = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
      http(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/scim+json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
      })
    return {
      key,
      keyId: id,
      get: (path, headers) => call("GET", path, undefined, headers),
      post: (path, body, headers) => call("POST", path, body, headers),
      put: (path, body, headers) => call("PUT", path, body, headers),
      patch: (path, body, headers) => call("PATCH", path, body, headers),
      delete: (path, headers) => call("DELETE", path, undefined, headers)
    }
  })

/** A PatchOp body. */
export const patchOp = (...operations: ReadonlyArray<Record<string, unknown>>) => ({
  schemas: [PatchOpUrn],
  Operations: operations
})

/** A unique suffix for names in one test. */
export const unique = () => crypto.randomUUID().slice(0, 8)

/** A User body as Okta sends it. */
export const oktaUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [UserUrn],
  userName,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ primary: true, value: userName, type: "work" }],
  displayName: "Ada Lovelace",
  locale: "en-US",
  externalId: `00u${unique()}`,
  groups: [],
  password: "Provisioned-Passw0rd!",
  active: true,
  ...extra
})

/** `?filter=...` */
export const filter = (expression: string) => `?filter=${encodeURIComponent(expression)}`

/** Asserts nothing; returns whether a response is a SCIM error of that status, for concise checks. */
export const isScimError = (result: HttpResult, status: number) =>
  result.status === status &&
  (result.headers.get("content-type") ?? "").startsWith("application/scim+json") &&
  Array.isArray(result.body?.schemas) && result.body.schemas[0] === ErrorUrn && result.body.status === String(status)
