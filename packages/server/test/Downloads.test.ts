/**
 * The SDK's downloads when they fail: `fetchDownload` (Promise users) rejects
 * with the Promise client's error classes — `_tag`, `status` where an answer
 * came, a one-line `message` — and its body errors with
 * `DownloadBrokenError` when it breaks off; `download*` (Effect) fail with a
 * `DownloadFailed` naming its `reason`. Against the test server, a closed port
 * and local servers that hang, answer something else, or break the body off.
 */
import * as Sdk from "@agent-platform/sdk"
import {
  ApiError,
  ConnectionError,
  DownloadBrokenError,
  PlatformError,
  TimeoutError,
  UnexpectedResponse
} from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { breakingServer, closedPort, localServer, refusedMessage, timedOutMessage } from "./LocalHttp.ts"
import { person } from "./RoomsFixtures.ts"
import { layer as testServer, secondTenant, serverSuite, TestServer } from "./TestServer.ts"

/** What `fetchDownload` resolved with (its body read to the end), or what it or its body rejected with. */
const fetched = (options: Sdk.DownloadOptions, path: Sdk.DownloadPath, query: Record<string, string> = {}) =>
  Effect.promise(async () => {
    let text = ""
    try {
      const { body, contentType } = await Sdk.fetchDownload(options, path, query)
      const decoder = new TextDecoder()
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk)
      return { text, contentType, error: undefined }
    } catch (error) {
      return { text, contentType: undefined, error }
    }
  })

/** A fresh tenant's administrator: the download options carrying their session. */
const adminOptions = Effect.gen(function*() {
  const { baseUrl } = yield* TestServer
  const { client } = yield* secondTenant()
  return { baseUrl, sessionToken: (yield* client.sessionToken)! } satisfies Sdk.DownloadOptions
})

layer(testServer(), serverSuite)("downloads: how a failed download rejects", (it) => {
  it.effect("an administrator's download resolves with its media type and streams its body", () =>
    Effect.gen(function*() {
      const options = yield* adminOptions
      const { contentType, error, text } = yield* fetched(options, "/api/export/metrics")
      assert.isUndefined(error)
      assert.match(contentType!, /^text\/csv/)
      assert.match(text, /^date,space_id,/)
    }))

  describe("an error the API declares: ApiError with the service's _tag, status, message and body", () => {
    it.effect("a session that does not exist: Unauthenticated, 401", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const { error } = yield* fetched({ baseUrl, sessionToken: "not-a-session" }, "/api/export/metrics")
        assert.instanceOf(error, ApiError)
        assert.instanceOf(error, PlatformError)
        const refused = error as ApiError
        assert.deepInclude(refused, { _tag: "Unauthenticated", status: 401 })
        assert.isNotEmpty(refused.message)
        assert.notInclude(refused.message, "\n")
        assert.deepInclude(refused.body, { _tag: "Unauthenticated", error: refused.message })
      }))

    it.effect("a member who is not an administrator: RoleMissing, 403", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const member = yield* person("Member")
        const { error } = yield* fetched(
          { baseUrl, sessionToken: (yield* member.client.sessionToken)! },
          "/api/export/conversations"
        )
        assert.instanceOf(error, ApiError)
        assert.deepInclude(error as object, { _tag: "RoleMissing", status: 403 })
        assert.isNotEmpty((error as ApiError).message)
      }))

    it.effect("an unknown space: NotFound, 404, a message naming it", () =>
      Effect.gen(function*() {
        const options = yield* adminOptions
        const { error } = yield* fetched(options, "/api/export/conversations", { group_id: "no-such-space" })
        assert.instanceOf(error, ApiError)
        assert.deepInclude(error as object, { _tag: "NotFound", status: 404 })
        assert.include((error as ApiError).message, "no-such-space")
      }))

    it.effect("an impossible date: InvalidRequest, 400", () =>
      Effect.gen(function*() {
        const options = yield* adminOptions
        const { error } = yield* fetched(options, "/api/export/metrics", { from: "2025-02-30" })
        assert.instanceOf(error, ApiError)
        assert.deepInclude(error as object, { _tag: "InvalidRequest", status: 400 })
        assert.isNotEmpty((error as ApiError).message)
      }))
  })

  describe("no answer", () => {
    it.effect("a refused connection: ConnectionError, no status, `cannot reach <url> (ECONNREFUSED)` and what to check", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const { error } = yield* fetched(
          { baseUrl: `http://127.0.0.1:${port}`, sessionToken: "s" },
          "/api/export/metrics"
        )
        assert.instanceOf(error, ConnectionError)
        assert.instanceOf(error, PlatformError)
        assert.deepInclude(error as object, { _tag: "ConnectionError", status: undefined })
        assert.strictEqual(
          (error as ConnectionError).message,
          refusedMessage(`http://127.0.0.1:${port}/api/export/metrics`)
        )
      }))

    it.effect("an answer that does not start within `timeout`: TimeoutError, no status", () =>
      Effect.gen(function*() {
        const silent = yield* localServer(() => "hang")
        const started = Date.now()
        const { error } = yield* fetched(
          { baseUrl: silent.url, sessionToken: "s", timeout: "300 millis" },
          "/api/export/roi-report"
        )
        assert.instanceOf(error, TimeoutError)
        assert.deepInclude(error as object, { _tag: "TimeoutError", status: undefined })
        assert.strictEqual(
          (error as TimeoutError).message,
          timedOutMessage("GET", `${silent.url}/api/export/roi-report`, "300ms")
        )
        assert.isBelow(Date.now() - started, 5_000)
      }).pipe(Effect.scoped))
  })

  describe("an answer that is not this service's, or a body that breaks off", () => {
    it.effect("another server's error page: UnexpectedResponse with its status", () =>
      Effect.gen(function*() {
        const proxy = yield* localServer(() => ({
          status: 502,
          body: "<html>Bad gateway</html>",
          headers: { "content-type": "text/html" }
        }))
        const { error } = yield* fetched({ baseUrl: proxy.url, sessionToken: "s" }, "/api/export/metrics")
        assert.instanceOf(error, UnexpectedResponse)
        assert.deepInclude(error as object, { _tag: "UnexpectedResponse", status: 502 })
        assert.strictEqual(
          (error as UnexpectedResponse).message,
          `${proxy.url}/api/export/metrics answered HTTP 502 with a body this client does not understand: is it an Agent Platform service?`
        )
      }).pipe(Effect.scoped))

    it.effect("a 200 that is not the file's media type (a sign-in page): UnexpectedResponse, 200", () =>
      Effect.gen(function*() {
        const portal = yield* localServer(() => ({
          status: 200,
          body: "<html>Sign in</html>",
          headers: { "content-type": "text/html; charset=utf-8" }
        }))
        const { error } = yield* fetched({ baseUrl: portal.url, sessionToken: "s" }, "/api/export/conversations")
        assert.instanceOf(error, UnexpectedResponse)
        assert.deepInclude(error as object, { _tag: "UnexpectedResponse", status: 200 })
        assert.include((error as UnexpectedResponse).message, "text/html; charset=utf-8, not text/csv")
      }).pipe(Effect.scoped))

    it.effect("a body that breaks off: what arrived, then DownloadBrokenError (`_tag` DownloadFailed), 200", () =>
      Effect.gen(function*() {
        const breaking = yield* breakingServer("text/csv; charset=utf-8", "date,space_id\r\n")
        const { error, text } = yield* fetched({ baseUrl: breaking.url, sessionToken: "s" }, "/api/export/metrics")
        assert.strictEqual(text, "date,space_id\r\n")
        assert.instanceOf(error, DownloadBrokenError)
        assert.instanceOf(error, PlatformError)
        assert.deepInclude(error as object, { _tag: "DownloadFailed", status: 200 })
        assert.match(
          (error as DownloadBrokenError).message,
          /^the download of http:\/\/127\.0\.0\.1:\d+\/api\/export\/metrics broke off \(.+\): what arrived is incomplete; download it again$/
        )
      }).pipe(Effect.scoped))
  })

  describe("download*, for Effect users", () => {
    it.effect("fail with DownloadFailed whose reason, status and message say what happened", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const run = (options: Sdk.DownloadOptions) =>
          Sdk.downloadMetrics(options).pipe(
            Effect.flatMap((download) => Stream.runDrain(download.body)),
            Effect.flip,
            Effect.provide(FetchHttpClient.layer)
          )
        const unauthenticated = yield* run({ baseUrl, sessionToken: "not-a-session" })
        assert.instanceOf(unauthenticated, Sdk.DownloadFailed)
        assert.deepInclude(unauthenticated, { reason: "Refused", status: 401 })
        assert.isNotEmpty(unauthenticated.message)
        assert.strictEqual(unauthenticated.message, unauthenticated.error)
        assert.deepInclude(unauthenticated.cause as object, { _tag: "Unauthenticated" })

        const port = yield* closedPort
        const refused = yield* run({ baseUrl: `http://127.0.0.1:${port}`, sessionToken: "s" })
        assert.strictEqual(refused.reason, "Unreachable")
        assert.isUndefined(refused.status)
        assert.strictEqual(
          refused.message,
          refusedMessage(`http://127.0.0.1:${port}/api/export/metrics`)
        )

        const silent = yield* localServer(() => "hang")
        const late = yield* run({ baseUrl: silent.url, sessionToken: "s", timeout: "200 millis" })
        assert.strictEqual(late.reason, "Timeout")
        assert.isUndefined(late.status)
        assert.strictEqual(
          late.message,
          timedOutMessage("GET", `${silent.url}/api/export/metrics`, "200ms")
        )
      }).pipe(Effect.scoped))
  })
})
