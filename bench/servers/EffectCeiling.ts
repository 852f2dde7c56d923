/**
 * The framework's ceiling for `bench:auth`: a bare effect HttpApi server with
 * one endpoint, `GET /v1/agents`, declared with the domain's own `AgentList`
 * schema and answering the same agents as the platform (from AGENTS_JSON),
 * with no authentication, no database and no request log (the router's
 * built-in logger is off). Listens on PORT.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpRouter from "effect/http/HttpRouter"
import { createServer } from "node:http"
import { AgentList } from "../../packages/domain/src/Agents/Agent.ts"

const agents = JSON.parse(process.env.AGENTS_JSON ?? "[]") as typeof AgentList.Type["agents"]

const Api = HttpApi.make("ceiling").add(
  HttpApiGroup.make("agents").add(HttpApiEndpoint.get("list", "/v1/agents", { success: AgentList }))
)

const AgentsHandlers = HttpApiBuilder.group(
  Api,
  "agents",
  (handlers) => handlers.handle("list", () => Effect.succeed({ agents }))
)

const Routes = HttpApiBuilder.layer(Api).pipe(Layer.provide(AgentsHandlers))

HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env.PORT), host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
