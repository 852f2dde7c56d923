/**
 * The floor of the platform's design for `bench:auth`: the ceiling's endpoint
 * (bench/servers/EffectCeiling.ts) behind the two mechanisms every `/v1`
 * request of the platform passes through, doing no work in them:
 *
 * - an HttpApi security middleware (a Bearer credential, as `ApiKeyAuth` is
 *   declared) that provides a principal without checking anything;
 * - a global HttpRouter middleware (as the platform's edge) that puts on the
 *   response the headers the platform puts there (`x-request-id` and the
 *   three `x-ratelimit-*`), with fixed values.
 *
 * What the platform costs over this is its own work: verifying the key, the
 * rate limits, the request log, the request's context. Listens on PORT.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Context, Effect, Layer } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createServer } from "node:http"
import { AgentList } from "../../packages/domain/src/Agents/Agent.ts"
import { Unauthenticated } from "../../packages/domain/src/Errors.ts"
import { apiKeySecurity } from "../../packages/domain/src/Security.ts"

const agents = JSON.parse(process.env.AGENTS_JSON ?? "[]") as typeof AgentList.Type["agents"]

class Caller extends Context.Service<Caller, { readonly keyId: string }>()("bench/EffectSkeleton/Caller") {}

class KeyAuth extends HttpApiMiddleware.Service<KeyAuth, { provides: Caller }>()("bench/EffectSkeleton/KeyAuth", {
  security: { apiKey: apiKeySecurity },
  error: [Unauthenticated]
}) {}

const Api = HttpApi.make("skeleton").add(
  HttpApiGroup.make("agents").add(HttpApiEndpoint.get("list", "/v1/agents", { success: AgentList })).middleware(
    KeyAuth
  )
)

const AgentsHandlers = HttpApiBuilder.group(
  Api,
  "agents",
  (handlers) => handlers.handle("list", () => Effect.succeed({ agents }))
)

const KeyAuthLive = Layer.succeed(
  KeyAuth,
  KeyAuth.of({ apiKey: (handled) => Effect.provideService(handled, Caller, { keyId: "bench" }) })
)

const headers = {
  "x-request-id": "00000000-0000-4000-8000-000000000000",
  "x-ratelimit-limit": "300",
  "x-ratelimit-remaining": "299",
  "x-ratelimit-reset": "60"
}

const EdgeLive = HttpRouter.middleware(
  (app) => Effect.map(app, (response) => HttpServerResponse.setHeaders(response, headers)),
  { global: true }
)

const Routes = HttpApiBuilder.layer(Api).pipe(
  Layer.provide(AgentsHandlers),
  Layer.provide(KeyAuthLive),
  Layer.provide(EdgeLive)
)

HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env.PORT), host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
