/** Catalog fixtures shared by the HTTP tests: actions, and spaces whose agent runs them. */
import type { ActionAdmin, Actions } from "@agent-platform/domain"
import type * as Sdk from "@agent-platform/sdk"
import { Effect } from "effect"
import { adminClient } from "./TestServer.ts"

/** A parameter described as `the <name>`. */
export const param = (name: string, type: Actions.ParameterType, required: boolean): Actions.ActionParameter => ({
  name,
  type,
  description: `the ${name}`,
  required
})

/** Creates an action (a GET with a random name unless `fields` say otherwise), as the admin or `as`. */
export const newAction = (
  fields: Partial<typeof ActionAdmin.CreateAction.Type> & { readonly url: string },
  as?: Sdk.Connected
) =>
  Effect.gen(function*() {
    const client = as ?? (yield* adminClient)
    return yield* client.api.actionsAdmin.create({
      payload: {
        name: `action-${crypto.randomUUID().slice(0, 8)}`,
        description: "Does a thing",
        http_method: "GET",
        parameters: [],
        is_active: true,
        ...fields
      }
    })
  }).pipe(Effect.orDie)

/** A new space with a random code, as the admin or `as`. */
export const newSpace = (as?: Sdk.Connected) =>
  Effect.gen(function*() {
    const client = as ?? (yield* adminClient)
    const code = `space-${crypto.randomUUID().slice(0, 8)}`
    return yield* client.api.admin.createSpace({ payload: { code, name: code } })
  }).pipe(Effect.orDie)

/** A new space and its primary agent, as the admin or `as`. */
export const spaceWithAgent = (
  agent: { readonly name: string; readonly summary: string },
  as?: Sdk.Connected
) =>
  Effect.gen(function*() {
    const client = as ?? (yield* adminClient)
    const space = yield* newSpace(client)
    const primary = yield* client.api.agentsAdmin.create({
      payload: { space_id: space.id, ...agent, is_primary: true }
    })
    return { space, agent: primary }
  }).pipe(Effect.orDie)

/** A new space whose primary agent has the given actions. */
export const spaceWith = (actionIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const as = yield* adminClient
    const { space, agent } = yield* spaceWithAgent({ name: "Agent", summary: "" }, as)
    yield* as.api.agentsAdmin.assignActions({ params: { id: agent.id }, payload: { action_ids: actionIds } })
    return space
  }).pipe(Effect.orDie)

/** `create_ticket`: a POST with two required parameters, for slot-filling conversations. */
export const ticketAction = (targetUrl: string): typeof ActionAdmin.CreateAction.Type => ({
  name: "create_ticket",
  description: "Create a support ticket",
  http_method: "POST",
  url: `${targetUrl}/tickets`,
  parameters: [
    { name: "title", type: "string", description: "What is wrong", required: true },
    { name: "priority", type: "string", description: "low, normal or high", required: true }
  ],
  is_active: true
})
