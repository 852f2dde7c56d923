/**
 * Naming things the way people do on a command line: a space by its code, an
 * agent or an action by its name — or any of them by id — resolved to the id
 * the API takes. A name that matches several is refused: the id decides.
 */
import type * as Sdk from "@agent-platform/sdk"
import { Effect, Schema } from "effect"
import * as Invocation from "./Invocation.ts"

/** The reference names nothing, or several things. */
export class UnknownReference extends Schema.TaggedError<UnknownReference>()("UnknownReference", {
  message: Schema.String
}) {}

/** The one item `ref` names: by id, else by `name`; otherwise `UnknownReference` pointing at `listCommand`. */
const pick = <A extends { readonly id: string }>(
  items: ReadonlyArray<A>,
  ref: string,
  name: (item: A) => string,
  what: string,
  listCommand: string
) =>
  Effect.gen(function*() {
    const byId = items.find((item) => item.id === ref)
    if (byId !== undefined) return byId
    const named = items.filter((item) => name(item) === ref)
    if (named.length === 1) return named[0]
    const list = yield* Invocation.command(listCommand)
    return yield* new UnknownReference({
      message: named.length === 0
        ? `${what} ${ref} not found: ${list} shows them`
        : `${named.length} ${what}s are named ${ref}: give the id (${list} shows them)`
    })
  })

/** A space by code or id. */
export const space = (client: Sdk.Connected, ref: string) =>
  Effect.flatMap(
    client.api.admin.listSpaces(),
    ({ spaces }) => pick(spaces, ref, (s) => s.code, "space", "spaces list")
  )

/** An agent by name or id. */
export const agent = (client: Sdk.Connected, ref: string) =>
  Effect.flatMap(
    client.api.agentsAdmin.list({ query: {} }),
    ({ agents }) => pick(agents, ref, (a) => a.name, "agent", "agents list")
  )

/** The tenant's actions, for looking several up. */
export const actions = (client: Sdk.Connected) => Effect.map(client.api.actionsAdmin.list(), ({ actions }) => actions)

/** An action, by name or id, among `all`. */
export const action = (all: ReadonlyArray<{ readonly id: string; readonly name: string }>, ref: string) =>
  pick(all, ref, (a) => a.name, "action", "actions list")
