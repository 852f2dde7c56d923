/**
 * The errors of the Promise client: every rejection is an instance of one of
 * these exported classes, with `_tag` (what happened), `status` (the HTTP
 * status, `undefined` when no answer came) and a one-line `message`:
 *
 * ```ts
 * try {
 *   await client.agents.get({ params: { id } })
 * } catch (error) {
 *   if (error instanceof ApiError && error._tag === "NotFound") ...
 *   if (error instanceof ConnectionError) ...
 * }
 * ```
 */
import { Data } from "effect"
import * as HttpClientError from "effect/http/HttpClientError"
import { isAnswerError } from "./internal/answerErrors.ts"

/** Base class of every error the Promise client rejects with. */
export class PlatformError extends Error {
  readonly _tag: string
  /** The HTTP status of the answer; `undefined` when no answer came. */
  readonly status: number | undefined
  constructor(options: {
    readonly _tag: string
    readonly status: number | undefined
    readonly message: string
    readonly cause?: unknown
  }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause })
    this._tag = options._tag
    this.status = options.status
    this.name = options._tag
  }
}

/**
 * The service answered with an error the contract declares: `_tag` names it
 * (`NotFound`, `ScopeMissing`, `RateLimited`, `ActionFailed`, ...), `message` is
 * the service's `error`, and `body` the whole decoded body.
 */
export class ApiError extends PlatformError {
  readonly body: Readonly<Record<string, unknown>>
  constructor(
    options: {
      readonly _tag: string
      readonly status: number
      readonly message: string
      readonly body: Readonly<Record<string, unknown>>
    }
  ) {
    super(options)
    this.body = options.body
  }
}

/** No answer: the connection was refused or reset, the host is unknown, or the URL is not one. */
export class ConnectionError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super({ _tag: "ConnectionError", status: undefined, message, cause })
  }
}

/** No answer within the client's `timeout`. */
export class TimeoutError extends PlatformError {
  constructor(message: string) {
    super({ _tag: "TimeoutError", status: undefined, message })
  }
}

/**
 * An answer the contract does not describe: probably not an Agent Platform
 * service at that address (another service, a proxy's error page).
 */
export class UnexpectedResponse extends PlatformError {
  constructor(status: number | undefined, message: string, cause?: unknown) {
    super({ _tag: "UnexpectedResponse", status, message, cause })
  }
}

/**
 * Arguments the contract refuses (a value out of range, a missing field, a
 * malformed id), found by the client before sending: nothing reached the
 * service. `message` names the field and the rule it breaks.
 */
export class InvalidInputError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super({ _tag: "InvalidInput", status: undefined, message, cause })
  }
}

/** A `SchemaError`'s text on one line: the rule, then where (`at ["rate_limit_rpm"]`). */
const oneLine = (error: object) => String((error as { readonly message?: unknown }).message).replace(/\s*\n\s*/g, " ")

/** The cause of the transport error a request fails with when the client's `timeout` passes. */
export class RequestTimedOut extends Data.TaggedError("RequestTimedOut")<{ readonly message: string }> {}

/** The HTTP status an error class of the domain declares (`httpApiStatus`). */
const declaredStatus = (error: object): number | undefined => {
  const status =
    (error.constructor as { readonly ast?: { readonly annotations?: { readonly httpApiStatus?: unknown } } }).ast
      ?.annotations?.httpApiStatus
  return typeof status === "number" ? status : undefined
}

/** A short reason for a failed connection: `ECONNREFUSED`, `ENOTFOUND`, ... or the innermost cause's message. */
export const reasonOf = (cause: unknown): string => {
  let current: unknown = cause
  let message = cause instanceof Error ? cause.message : String(cause)
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, message: text, cause: next } = current as {
      readonly code?: unknown
      readonly message?: unknown
      readonly cause?: unknown
    }
    if (typeof code === "string") return code
    if (typeof text === "string" && text.length > 0) message = text
    current = next
  }
  return message
}

/** What to do about a connection that failed with `reason` (a code of {@link reasonOf}). */
export const connectionAdvice = (reason: string): string => {
  switch (reason) {
    case "ECONNREFUSED":
      return "is the service running there, and is baseUrl right?"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve: check baseUrl"
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
      return "the connection was cut: retry; if it keeps happening, check a proxy or load balancer in between"
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return "the host did not accept the connection in time: check baseUrl and any firewall on the way"
    default:
      return /CERT|SSL|TLS/i.test(reason)
        ? "the TLS handshake failed: check the service's certificate (and NODE_EXTRA_CA_CERTS for a private CA)"
        : "check baseUrl and that the service is running"
  }
}

/** The message of a request that got no answer within the client's timeout. */
export const timeoutMessage = (method: string, url: string, detail: string) =>
  `${method} ${url}: ${detail}: retry, or give the client a longer timeout`

const fromHttpClientError = (error: HttpClientError.HttpClientError): PlatformError => {
  const reason = error.reason
  const url = reason.request.url
  switch (reason._tag) {
    case "TransportError":
      if (reason.cause instanceof RequestTimedOut) {
        return new TimeoutError(timeoutMessage(reason.request.method, url, reason.cause.message))
      } else {
        const why = reasonOf(reason.cause)
        return new ConnectionError(`cannot reach ${url} (${why}): ${connectionAdvice(why)}`, reason.cause)
      }
    case "InvalidUrlError":
      return new ConnectionError(`not a valid URL: ${url}`, reason.cause)
    case "EncodeError":
      return new PlatformError({
        _tag: "EncodeError",
        status: undefined,
        message: `cannot encode the request: ${reason.description ?? "invalid body"}`,
        cause: reason.cause
      })
    case "StatusCodeError":
    case "DecodeError":
    case "EmptyBodyError":
      return new UnexpectedResponse(
        reason.response.status,
        `${url} answered HTTP ${reason.response.status} with a body this client does not understand: is it an Agent Platform service?`,
        reason.cause
      )
  }
}

/** The Promise client's error for any failure of the Effect client. */
export const toPlatformError = (failure: unknown): PlatformError => {
  if (failure instanceof PlatformError) return failure
  if (HttpClientError.isHttpClientError(failure)) return fromHttpClientError(failure)
  if (typeof failure === "object" && failure !== null) {
    const status = declaredStatus(failure)
    const { _tag, error, ...rest } = failure as { readonly _tag?: unknown; readonly error?: unknown }
    if (status !== undefined && typeof _tag === "string") {
      const message = typeof error === "string" ? error : `the service answered ${_tag} (HTTP ${status})`
      return new ApiError({ _tag, status, message, body: { _tag, error, ...rest } })
    }
    if (_tag === "SchemaError") {
      return isAnswerError(failure)
        ? new UnexpectedResponse(undefined, `the answer does not match the contract: ${oneLine(failure)}`, failure)
        : new InvalidInputError(
          `invalid arguments, nothing was sent: ${oneLine(failure)}: correct that argument and call again`,
          failure
        )
    }
  }
  return new PlatformError({ _tag: "UnknownError", status: undefined, message: String(failure), cause: failure })
}

/**
 * A failure of the Effect client as the SDK's streams tell it in their own
 * typed errors: no answer (`Unreachable`), none in time (`Timeout`), or an
 * answer that is not this service's (`UnexpectedAnswer`), with the answer's
 * status and the Promise client's one-line text.
 */
export const describeFailure = (failure: unknown) => {
  const platform = toPlatformError(failure)
  const reason = platform instanceof TimeoutError
    ? "Timeout" as const
    : platform instanceof ConnectionError
    ? "Unreachable" as const
    : "UnexpectedAnswer" as const
  return { reason, status: platform.status, text: platform.message }
}
