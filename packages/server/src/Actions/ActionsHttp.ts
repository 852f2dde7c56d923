/**
 * The handlers of `/v1/actions` (the catalog and direct execution, API keys)
 * and `/api/admin/actions` + `/api/admin/secrets` (administrators).
 */
import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { currentKey, currentUser } from "../Auth/CurrentUser.ts"
import { ActionCatalog } from "./ActionCatalog.ts"
import { ActionRunner } from "./ActionRunner.ts"
import { TenantSecrets } from "./TenantSecrets.ts"

export const ActionsHttp = HttpApiBuilder.group(Api, "actions", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* ActionCatalog
    const runner = yield* ActionRunner
    return handlers
      .handle("list", () =>
        Effect.flatMap(currentKey, (key) => Effect.map(catalog.catalog(key.tenantId), (actions) => ({ actions }))))
      .handle("execute", ({ params, payload }) =>
        Effect.flatMap(currentKey, (key) =>
          runner.execute({
            tenantId: key.tenantId,
            caller: { kind: "key", keyId: key.keyId, spaceId: boundSpace(key) },
            actionId: params.id,
            params: payload.params,
            // A direct key call bypasses slot-filling and any human confirmation (spec rule 6): autonomous.
            trigger: { type: "key", keyId: key.keyId, channel: "direct" }
          })))
  }))

export const ActionsAdminHttp = HttpApiBuilder.group(Api, "actionsAdmin", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* ActionCatalog
    const secrets = yield* TenantSecrets
    return handlers
      .handle("list", () =>
        Effect.flatMap(currentUser, (admin) =>
          Effect.map(catalog.adminList(admin.tenantId), (actions) => ({ actions }))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(currentUser, (admin) =>
          catalog.create(admin, payload)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(currentUser, (admin) =>
          catalog.update(admin, params.id, payload)))
      .handle("delete", ({ params }) =>
        Effect.flatMap(currentUser, (admin) => catalog.deactivate(admin, params.id)))
      .handle("listSecrets", () =>
        Effect.flatMap(currentUser, (admin) =>
          Effect.map(secrets.list(admin.tenantId), (list) => ({ secrets: list }))))
      .handle("putSecret", ({ params, payload }) =>
        Effect.flatMap(currentUser, (admin) =>
          secrets.put(admin, params.name, payload.value)))
      .handle("deleteSecret", ({ params }) =>
        Effect.flatMap(currentUser, (admin) =>
          secrets.remove(admin, params.name)))
  }))
