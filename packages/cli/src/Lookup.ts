/**
 * Naming things the way people do on a command line: a space by its code, an
 * agent or an action by its name — or any of them by id — resolved to the id
 * the API takes. A name that matches several is refused: the id decides.
 */
import type * as Sdk from "@agent-platform/sdk"
import { Effect, Predicate, Schema } from "effect"
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

const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))

/**
 * The agent `ref` names among what `listed` lists. A caller refused the list
 * (`refusal`: a key without `agents:read`, a session below Space Admin) may
 * still give an id, passed on unchecked as before; a name then cannot be
 * looked up, and `why` says what it would take.
 */
const agentOrId = <E extends { readonly _tag: string }, R>(
  listed: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly name: string }>, E, R>,
  ref: string,
  refusal: E["_tag"],
  why: string
): Effect.Effect<{ readonly id: string }, E | UnknownReference, R> =>
  listed.pipe(
    Effect.flatMap((agents) => pick(agents, ref, (a) => a.name, "agent", "agents list")),
    Effect.catchIf(
      (error): error is E => Predicate.isTagged(error, refusal),
      () =>
        isUuid(ref)
          ? Effect.succeed({ id: ref })
          : Effect.fail(new UnknownReference({ message: `cannot look up the agent named ${ref}: ${why}; give its id` }))
    )
  )

/** An agent by name or id, as an API key (`GET /v1/agents`); by id only for a key without `agents:read`. */
export const agentAsKey = (client: Sdk.Connected, ref: string) =>
  agentOrId(
    Effect.map(client.api.agents.list({ query: {} }), ({ agents }) => agents),
    ref,
    "ScopeMissing",
    "the key may not list agents (that takes the scope agents:read or agents)"
  )

/** An agent by name or id, for any signed-in user; by id only for those who may not list agents (below Space Admin). */
export const agentAsUser = (client: Sdk.Connected, ref: string) =>
  agentOrId(
    Effect.map(client.api.agentsAdmin.list({ query: {} }), ({ agents }) => agents),
    ref,
    "RoleMissing",
    "listing agents takes an administrator or a Space Admin"
  )

/** The tenant's actions, for looking several up. */
export const actions = (client: Sdk.Connected) => Effect.map(client.api.actionsAdmin.list(), ({ actions }) => actions)

/** An action, by name or id, among `all`. */
export const action = (all: ReadonlyArray<{ readonly id: string; readonly name: string }>, ref: string) =>
  pick(all, ref, (a) => a.name, "action", "actions list")
