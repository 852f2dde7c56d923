/**
 * The session cookie: `Service-Token` (HttpOnly, SameSite=Lax, Path=/,
 * Secure when served over https). `service_session` is accepted on requests too.
 */
import { Effect } from "effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { ServerConfig } from "../Platform/Config.ts"

export const cookieName = "Service-Token"
export const alternateCookieName = "service_session"

/** The session token a request carries, if any. */
export const readSessionToken = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const token = request.cookies[cookieName] ?? request.cookies[alternateCookieName]
  return token === undefined || token.length === 0 ? undefined : token
}

const isHttps = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* ServerConfig
  return config.trustedProxies > 0 && request.headers["x-forwarded-proto"]?.split(",")[0].trim() === "https"
})

/** Sets the cookie on the response of the current request. */
export const setSessionCookie = (token: string, maxAgeSeconds: number) =>
  Effect.flatMap(
    isHttps,
    (secure) =>
      HttpEffect.appendPreResponseHandler((_request, response) =>
        Effect.orDie(HttpServerResponse.setCookie(response, cookieName, token, {
          httpOnly: true,
          sameSite: "lax",
          path: "/",
          secure,
          maxAge: `${maxAgeSeconds} seconds`
        }))
      )
  )

/** Expires both cookie names on the response of the current request. */
export const clearSessionCookie = Effect.flatMap(
  isHttps,
  (secure) =>
    HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.orDie(
        Effect.flatMap(
          HttpServerResponse.setCookie(response, cookieName, "", {
            httpOnly: true,
            sameSite: "lax",
            path: "/",
            secure,
            maxAge: "0 seconds"
          }),
          (next) =>
            HttpServerResponse.setCookie(next, alternateCookieName, "", {
              httpOnly: true,
              sameSite: "lax",
              path: "/",
              secure,
              maxAge: "0 seconds"
            })
        )
      )
    )
)
