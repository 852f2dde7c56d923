/**
 * Handlers for groups a later release builds: every endpoint answers 501
 * `{error: "not implemented"}` (SCIM in its own error schema). They are
 * listed as not done in the README, never called done.
 */
import { Effect, type Layer } from "effect"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Api, Errors, Scim } from "@agent-platform/domain"

type GroupId = (typeof Api)["groups"][keyof (typeof Api)["groups"]]["identifier"]

const notImplemented = (group: string) =>
  group === "scim"
    ? new Scim.ScimNotImplemented(Scim.scimError(501, "not implemented"))
    : Errors.notImplemented()

/** A group whose every endpoint answers 501. */
export const notImplementedGroup = <const Id extends GroupId>(id: Id): Layer.Layer<HttpApiGroup.Service<"platform", Id>> =>
  HttpApiBuilder.group(Api, id, (handlers) => {
    // Each endpoint gets the same handler; the handler types differ per endpoint, hence the loosened view.
    let builder: any = handlers
    for (const endpoint of Object.keys(Api.groups[id].endpoints)) {
      builder = builder.handle(endpoint, () => Effect.fail(notImplemented(id)))
    }
    return builder
  }) as Layer.Layer<HttpApiGroup.Service<"platform", Id>>
