/**
 * What the edge of the server learns about one request while it is handled:
 * its id, the tenant once authenticated, and the rate-limit headers to send.
 * The HTTP middleware creates one per request; the authentication middleware
 * fills it in; the HTTP middleware reads it back to log and set headers.
 */
import { Context } from "effect"

export interface RequestInfo {
  readonly requestId: string
  tenantId: string | undefined
  /** Headers to add to the response, whatever its status: `x-request-id`, then e.g. `x-ratelimit-*` (lower case). */
  readonly responseHeaders: Record<string, string>
}

export const makeRequestInfo = (requestId: string): RequestInfo => ({
  requestId,
  tenantId: undefined,
  responseHeaders: { "x-request-id": requestId }
})

/** The current request's info; outside a request, a throwaway one. */
export const CurrentRequestInfo = Context.Reference<RequestInfo>(
  "@agent-platform/server/Platform/CurrentRequestInfo",
  { defaultValue: () => makeRequestInfo("none") }
)
