/** The handlers of `/v1/agents` (API keys) and `/api/admin/agents` (administrators and Space Admins). */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { currentKey, currentUser } from "../Auth/CurrentUser.ts"
import { AgentLists } from "./AgentLists.ts"
import { Agents } from "./Agents.ts"

const jsonText = (json: string) => HttpServerResponse.text(json, { contentType: "application/json" })

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const lists = yield* AgentLists
    return handlers
      // The list's JSON comes encoded from the cache: no query, no encoding, no effect step per request.
      .handle("list", ({ query }) =>
        Effect.flatMap(currentKey, (key) => {
          const bound = boundSpace(key)
          const held = lists.held(key.tenantId, query.space, bound)
          return held !== undefined
            ? Effect.succeed(jsonText(held))
            : Effect.map(Effect.orDie(lists.encoded(key.tenantId, query.space, bound)), jsonText)
        }))
      .handle("get", ({ params }) =>
        Effect.flatMap(currentKey, (key) => agents.detail(key.tenantId, params.id, boundSpace(key))))
  }))

export const AgentsAdminHttp = HttpApiBuilder.group(Api, "agentsAdmin", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(currentUser, (actor) => agents.adminList(actor, query.space_id)))
      .handle("create", ({ payload }) => Effect.flatMap(currentUser, (actor) => agents.create(actor, payload)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(currentUser, (actor) => agents.update(actor, params.id, payload)))
      .handle("delete", ({ params }) =>
        Effect.flatMap(currentUser, (actor) => agents.remove(actor, params.id)))
      .handle("assignActions", ({ params, payload }) =>
        Effect.flatMap(currentUser, (actor) =>
          agents.assignActions(actor, params.id, payload.action_ids)))
  }))
