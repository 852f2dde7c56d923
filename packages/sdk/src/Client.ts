/**
 * The typed client of the platform API, derived from the one HttpApi the
 * server implements: every endpoint, payload, success and error is checked at
 * compile time and decoded at run time.
 *
 * Authenticate with an API key (`apiKey`) for the `/v1` interface, or sign in
 * with `auth.login` for the `/api` session interface: the client keeps the
 * session cookie it receives and sends it back.
 */
import { Api } from "@agent-platform/domain"
import { Context, Duration, Effect, Layer, Redacted, Ref } from "effect"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as Cookies from "effect/http/Cookies"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { markAnswerError } from "./internal/answerErrors.ts"
import { RequestTimedOut } from "./PlatformError.ts"

export interface ClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  /** An API key `sk_live_...`, sent as `Authorization: Bearer`. */
  readonly apiKey?: string | Redacted.Redacted<string> | undefined
  /** A session token (the `Service-Token` cookie value) from an earlier login. */
  readonly sessionToken?: string | undefined
  /** Extra headers for every request (e.g. `X-Request-Id`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * How long a request may wait for the answer's headers (default 30 seconds);
   * then it fails with a transport error whose cause is `RequestTimedOut`
   * (the Promise client rejects with `TimeoutError`).
   */
  readonly timeout?: Duration.Input | undefined
}

/** The default of {@link ClientOptions.timeout}. */
export const defaultTimeout: Duration.Input = "30 seconds"

/**
 * `client` failing a request whose answer does not start within `timeout`
 * (the request is aborted) with a transport error caused by `RequestTimedOut`.
 */
export const withTimeout = (timeout: Duration.Input) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const duration = Duration.fromInputUnsafe(timeout)
  const message = `no answer within ${Duration.format(duration)}`
  return HttpClient.transform(client, (response, request) =>
    Effect.timeoutOrElse(response, {
      duration,
      orElse: () =>
        Effect.fail(
          new HttpClientError.HttpClientError({
            reason: new HttpClientError.TransportError({
              request,
              cause: new RequestTimedOut({ message }),
              description: message
            })
          })
        )
    }))
}

/** The derived client: one property per group, one method per endpoint. */
export type PlatformClient = HttpApiClient.ForApi<typeof Api>

/** The client plus its cookie jar (holding the session after a login). */
export interface Connected {
  readonly api: PlatformClient
  readonly cookies: Ref.Ref<ReadonlyArray<Cookies.Cookie>>
  /** The current session token, if signed in. */
  readonly sessionToken: Effect.Effect<string | undefined>
}

export const sessionCookieName = "Service-Token"

/** Builds the client over the given `HttpClient` (fetch by default, see {@link layer}). */
export const make: (options: ClientOptions) => Effect.Effect<Connected, never, HttpClient.HttpClient> = Effect
  .fnUntraced(function*(options: ClientOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const initial = options.sessionToken === undefined
      ? []
      : Cookies.mergeIntoArray(
        [],
        baseUrl,
        Cookies.fromSetCookie(`${sessionCookieName}=${options.sessionToken}; Path=/`),
        Date.now()
      )
    const cookies = yield* Ref.make<ReadonlyArray<Cookies.Cookie>>(initial)
    const apiKey = options.apiKey === undefined
      ? undefined
      : Redacted.isRedacted(options.apiKey)
      ? options.apiKey
      : Redacted.make(options.apiKey)
    const api = yield* HttpApiClient.make(Api, {
      transformClient: (client) =>
        client.pipe(
          // The base URL goes on first: the cookie jar picks cookies by the request's full URL.
          HttpClient.mapRequest((request) => {
            let next = HttpClientRequest.prependUrl(request, baseUrl)
            if (options.headers !== undefined) next = HttpClientRequest.setHeaders(next, options.headers)
            if (apiKey !== undefined) next = HttpClientRequest.bearerToken(next, Redacted.value(apiKey))
            return next
          }),
          HttpClient.withCookiesRef(cookies),
          withTimeout(options.timeout ?? defaultTimeout)
        ),
      // A SchemaError from here is the answer's; one from before the request is the arguments' (InvalidInputError).
      transformResponse: Effect.tapError((error) => Effect.sync(() => markAnswerError(error)))
    })
    const sessionToken = Effect.map(Ref.get(cookies), (jar) => jar.find((c) => c.name === sessionCookieName)?.value)
    return { api, cookies, sessionToken } satisfies Connected
  })

/** The client as a service. */
export class PlatformApi extends Context.Service<PlatformApi, Connected>()("@agent-platform/sdk/PlatformApi") {
  /** A client over `fetch`. */
  static readonly layer = (options: ClientOptions) =>
    Layer.effect(PlatformApi, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
}
