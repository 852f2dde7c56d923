/**
 * SCIM Groups (RFC 7644 §3.3-3.6): sets of the tenant's users. Members must
 * be users of the tenant (400 invalidValue otherwise). Every membership
 * change, rename and deletion recomputes the affected users' roles from the
 * role mappings, in the same transaction, and is appended to the admin audit
 * chain as the calling key.
 */
import { Scim, ScimSchemas } from "@agent-platform/domain"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditLog } from "../Audit/AuditLog.ts"
import {
  attempt,
  excludes,
  type NormalizedResource,
  normalizeResource,
  project,
  type Projection
} from "./ScimAttributes.ts"
import { groupFields } from "./ScimFields.ts"
import { ScimGroupsRepo } from "./ScimGroupsRepo.ts"
import { uniqueness } from "./ScimListing.ts"
import { resolveMemberFilters } from "./ScimMemberFilter.ts"
import { applyOperations, readOperations } from "./ScimPatch.ts"
import { groupResource } from "./ScimResources.ts"
import {
  checkIfMatch,
  foundOrNotFound,
  listPage,
  type ScimCaller,
  type ScimResourceService
} from "./ScimResourceService.ts"
import { ScimRoleMappings } from "./ScimRoleMappings.ts"
import { ScimUsersRepo } from "./ScimUsersRepo.ts"

const patchTarget = { schema: ScimSchemas.GroupSchema, extensions: [], readOnly: ["id", "meta", "schemas"] }

const projected = (resource: Scim.ScimGroup, projection: Projection) =>
  project(resource, projection, ScimSchemas.GroupSchema)

const conflictMessage = (displayName: string) => () =>
  `A group named ${JSON.stringify(displayName)} already exists in this tenant.`

/** What a normalized Group body sets. */
interface GroupState {
  readonly displayName: string
  readonly externalId: string | null
  readonly memberIds: ReadonlyArray<string>
}

const groupState = (resource: NormalizedResource): GroupState | Scim.ScimBadRequest => {
  const displayName = resource.attributes.displayName
  if (typeof displayName !== "string" || displayName.trim() === "") {
    return Scim.ScimBadRequest.of("invalidValue", "displayName is required: send the group's name.")
  }
  if (displayName.length > 256) {
    return Scim.ScimBadRequest.of("invalidValue", "displayName must be at most 256 characters.")
  }
  const members = (resource.attributes.members ?? []) as ReadonlyArray<Record<string, unknown>>
  const ids = new Set<string>()
  for (const member of members) {
    if (typeof member.value !== "string" || member.value.trim() === "") {
      return Scim.ScimBadRequest.of("invalidValue", "Each member needs a value: the id of a user of the tenant.")
    }
    if (typeof member.type === "string" && member.type.toLowerCase() !== "user") {
      return Scim.ScimBadRequest.of(
        "invalidValue",
        `Member ${member.value} is of type ${member.type}: only users can be members (no nested groups).`
      )
    }
    ids.add(member.value.trim().toLowerCase())
  }
  return { displayName: displayName.trim(), externalId: resource.externalId ?? null, memberIds: [...ids] }
}

export class ScimGroups
  extends Context.Service<ScimGroups, ScimResourceService<Scim.ScimGroup>>()("@agent-platform/server/Scim/ScimGroups")
{
  static readonly layer = Layer.effect(
    ScimGroups,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ScimGroupsRepo
      const users = yield* ScimUsersRepo
      const roles = yield* ScimRoleMappings
      const audit = yield* AuditLog
      const fields = groupFields(sql)

      const normalize = (body: Record<string, unknown>) =>
        Effect.suspend(() => {
          const result = attempt(() => normalizeResource(ScimSchemas.GroupSchema, [], body))
          if (!result.ok) return Effect.fail(result.error)
          const state = groupState(result.value)
          return state instanceof Scim.ScimBadRequest ? Effect.fail(state) : Effect.succeed(state)
        })

      /** Every member must be a user of the tenant (another tenant's ids look like unknown ones). */
      const checkMembers = (caller: ScimCaller, memberIds: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const existing = yield* users.existing(caller.tenantId, memberIds)
          const unknown = memberIds.filter((id) => !existing.has(id))
          if (unknown.length > 0) {
            return yield* Scim.ScimBadRequest.of(
              "invalidValue",
              `Not users of this tenant: ${unknown.slice(0, 20).join(", ")}${
                unknown.length > 20 ? ", ..." : ""
              }. Provision the users first.`
            )
          }
        })

      const found = (
        caller: ScimCaller,
        id: string,
        options: { readonly lock?: boolean; readonly members?: boolean } = {}
      ) => foundOrNotFound("Group", id, repo.find(caller.tenantId, id, options))

      const answer = (caller: ScimCaller, id: string, projection: Projection) =>
        Effect.map(
          found(caller, id, { members: !excludes(projection, "members", ScimSchemas.GroupSchemaUrn) }),
          (row) => {
            const resource = groupResource(row, caller.baseUrl)
            return { resource: projected(resource, projection), version: resource.meta!.version }
          }
        )

      const write = (
        caller: ScimCaller,
        id: string,
        ifMatch: string | undefined,
        operation: "replace" | "patch",
        next: (current: Scim.ScimGroup) => Effect.Effect<GroupState, Scim.ScimBadRequest>
      ) =>
        Effect.gen(function*() {
          let displayName = ""
          yield* uniqueness(
            sql.withTransaction(Effect.gen(function*() {
              const row = yield* found(caller, id, { lock: true })
              const current = groupResource(row, caller.baseUrl)
              yield* checkIfMatch("Group", id, ifMatch, current.meta!.version)
              const state = yield* next(current)
              displayName = state.displayName
              yield* checkMembers(caller, state.memberIds)
              const before = new Set((row.members ?? []).map((member) => member.value))
              const after = new Set(state.memberIds)
              const added = state.memberIds.filter((member) => !before.has(member))
              const removed = [...before].filter((member) => !after.has(member))
              const renamed = state.displayName !== row.display_name
              yield* repo.update(caller.tenantId, id, { displayName: state.displayName, externalId: state.externalId })
              yield* repo.addMembers(caller.tenantId, id, added)
              yield* repo.removeMembers(id, removed)
              yield* audit.append("admin_audit_log", {
                tenantId: caller.tenantId,
                event: "scim.group.updated",
                actor: `key:${caller.keyId}`,
                target: `group:${id}`,
                data: {
                  operation,
                  display_name: state.displayName,
                  ...(renamed ? { renamed_from: row.display_name } : {}),
                  members_added: added,
                  members_removed: removed
                }
              })
              // A rename can make the group match another mapping: every member's role is recomputed then.
              yield* roles.applyTo(
                caller.tenantId,
                `key:${caller.keyId}`,
                renamed ? [...new Set([...before, ...after])] : [...added, ...removed]
              )
            })),
            () => conflictMessage(displayName)()
          )
        })

      const create = Effect.fn("ScimGroups.create")(
        function*(caller: ScimCaller, body: Record<string, unknown>, projection: Projection) {
          const state = yield* normalize(body)
          const id = yield* uniqueness(
            sql.withTransaction(Effect.gen(function*() {
              yield* checkMembers(caller, state.memberIds)
              const id = yield* repo.insert(caller.tenantId, {
                displayName: state.displayName,
                externalId: state.externalId
              })
              yield* repo.addMembers(caller.tenantId, id, state.memberIds)
              yield* audit.append("admin_audit_log", {
                tenantId: caller.tenantId,
                event: "scim.group.created",
                actor: `key:${caller.keyId}`,
                target: `group:${id}`,
                data: { display_name: state.displayName, members_added: state.memberIds }
              })
              yield* roles.applyTo(caller.tenantId, `key:${caller.keyId}`, state.memberIds)
              return id
            })),
            conflictMessage(state.displayName)
          )
          // The group was just created: not finding it is a defect, not a 404.
          return yield* answer(caller, id, projection).pipe(Effect.catchTag("ScimNotFound", Effect.die))
        }
      )

      const replace = Effect.fn("ScimGroups.replace")(function*(
        caller: ScimCaller,
        id: string,
        body: Record<string, unknown>,
        ifMatch: string | undefined,
        projection: Projection
      ) {
        yield* found(caller, id, { members: false })
        const state = yield* normalize(body)
        yield* write(caller, id, ifMatch, "replace", () => Effect.succeed(state))
        return yield* answer(caller, id, projection)
      })

      const patch = Effect.fn("ScimGroups.patch")(function*(
        caller: ScimCaller,
        id: string,
        body: Record<string, unknown>,
        ifMatch: string | undefined,
        projection: Projection
      ) {
        const before = groupResource(yield* found(caller, id, { members: false }), caller.baseUrl)
        const operations = readOperations(patchTarget, body, before)
        if (operations instanceof Scim.ScimBadRequest) return yield* operations
        yield* write(caller, id, ifMatch, "patch", (current) =>
          Effect.gen(function*() {
            const { meta: _meta, ...document } = current
            // Member filters (`members[display eq "Ada"]`) are run on the members as returned, then applied by id.
            const resolved = resolveMemberFilters(operations, current.members ?? [])
            if (resolved instanceof Scim.ScimBadRequest) return yield* resolved
            // Members are patched as their ids alone, so removal by value matches however the provider wrote them.
            const members = (current.members ?? []).map((member) => ({ value: member.value }))
            const patched = applyOperations({ ...document, members, meta: { resourceType: "Group" } }, resolved)
            if (patched instanceof Scim.ScimBadRequest) return yield* patched
            return yield* normalize(patched)
          }))
        return yield* answer(caller, id, projection)
      })

      const remove = Effect.fn("ScimGroups.remove")(
        function*(caller: ScimCaller, id: string, ifMatch: string | undefined) {
          yield* sql.withTransaction(Effect.gen(function*() {
            const row = yield* found(caller, id, { lock: true })
            yield* checkIfMatch("Group", id, ifMatch, groupResource(row, caller.baseUrl).meta!.version)
            const former = (row.members ?? []).map((member) => member.value)
            yield* repo.remove(caller.tenantId, id)
            yield* audit.append("admin_audit_log", {
              tenantId: caller.tenantId,
              event: "scim.group.deleted",
              actor: `key:${caller.keyId}`,
              target: `group:${id}`,
              data: { display_name: row.display_name, members_removed: former }
            })
            yield* roles.applyTo(caller.tenantId, `key:${caller.keyId}`, former)
          }))
        }
      )

      return ScimGroups.of({
        list: (caller, params) =>
          listPage(
            sql,
            fields,
            params,
            (page) =>
              repo.list({
                tenantId: caller.tenantId,
                ...page,
                members: !excludes(params, "members", ScimSchemas.GroupSchemaUrn)
              }),
            (row) => projected(groupResource(row, caller.baseUrl), params)
          ),
        get: answer,
        create,
        replace,
        patch,
        remove
      })
    })
  )
}
