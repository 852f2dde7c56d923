import { Api } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { SpaceAdmins } from "../SpaceAdmin/SpaceAdmins.ts"
import { Tenants } from "../Tenants/Tenants.ts"
import { Users } from "../Users/Users.ts"

export const AdminHttp = HttpApiBuilder.group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const tenants = yield* Tenants
    return handlers
      .handle("createUser", ({ payload }) =>
        Effect.flatMap(currentUser, (actor) => users.create(actor, payload)).pipe(orDieOnSql))
      .handle("listUsers", () =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          return { users: yield* users.list(actor.tenantId) }
        }).pipe(orDieOnSql))
      .handle("updateUser", ({ params, payload }) =>
        Effect.flatMap(currentUser, (actor) =>
          users.update(actor, params.id, payload)).pipe(orDieOnSql))
      .handle("createSpace", ({ payload }) =>
        Effect.flatMap(currentUser, (actor) =>
          tenants.createSpace(actor, payload)).pipe(orDieOnSql))
      .handle("listSpaces", () =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          return { spaces: yield* tenants.listSpaces(actor.tenantId) }
        }).pipe(orDieOnSql))
      .handle("getFlags", () =>
        Effect.flatMap(currentUser, (actor) =>
          tenants.flags(actor.tenantId)).pipe(orDieOnSql))
      .handle("updateFlags", ({ payload }) =>
        Effect.flatMap(currentUser, (actor) =>
          tenants.setFlags(actor, payload)).pipe(orDieOnSql))
      .handle("createTenant", ({ payload }) =>
        Effect.flatMap(currentUser, (actor) =>
          tenants.createTenant(actor, payload)).pipe(orDieOnSql))
  }))

export const SpaceAdminHttp = HttpApiBuilder.group(Api, "spaceAdmin", (handlers) =>
  Effect.gen(function*() {
    const spaceAdmins = yield* SpaceAdmins
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          return { assignments: yield* spaceAdmins.list(actor.tenantId) }
        }).pipe(orDieOnSql))
      .handle("assign", ({ payload }) =>
        Effect.flatMap(currentUser, (actor) => spaceAdmins.assign(actor, payload)).pipe(orDieOnSql))
  }))
