/**
 * The role model (issue #8, item 1), cell by cell over HTTP: who may create
 * users with which role, change users holding which role, and create
 * tenants. The expected table is written out here, independently of the
 * domain's `grantableRoles`, so that a change to either shows.
 */
import type { Role } from "@agent-platform/domain"
import type * as Sdk from "@agent-platform/sdk"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { adminClient, layer as testServer, messageOf, secondTenant, serverSuite, signIn } from "./TestServer.ts"

const password = "Role-Model-Passw0rd"
const roles: ReadonlyArray<Role> = ["r_user", "r_space_admin", "r_security_officer", "r_admin", "r_superadmin"]

type ActorKind = "platform superadmin" | "tenant superadmin" | Exclude<Role, "r_superadmin">

/** What each actor may do: the roles it grants (null: no access to the admin surface at all), and tenant creation. */
const expected: Record<ActorKind, { readonly grants: ReadonlyArray<Role> | null; readonly createsTenants: boolean }> = {
  "platform superadmin": { grants: roles, createsTenants: true },
  "tenant superadmin": { grants: roles, createsTenants: false },
  r_admin: { grants: ["r_user", "r_space_admin", "r_security_officer", "r_admin"], createsTenants: false },
  r_security_officer: { grants: null, createsTenants: false },
  r_space_admin: { grants: null, createsTenants: false },
  r_user: { grants: null, createsTenants: false }
}

const email = (label: string) => `${label.replace(/[^a-z]/g, "")}-${crypto.randomUUID().slice(0, 8)}@roles.example.com`

interface Actor {
  readonly kind: ActorKind
  readonly client: Sdk.Connected
  /** Creates users of any role in the actor's tenant (its superadmin). */
  readonly owner: Sdk.Connected
}

/** One signed-in actor of each kind: five in the platform tenant, a superadmin in another. */
const actors = Effect.gen(function*() {
  const platform = yield* adminClient
  const result: Array<Actor> = [{ kind: "platform superadmin", client: platform, owner: platform }]
  for (const role of ["r_admin", "r_security_officer", "r_space_admin", "r_user"] as const) {
    const address = email(role)
    yield* platform.api.admin.createUser({ payload: { email: address, nombre: role, password, role_id: role } })
    result.push({ kind: role, client: yield* signIn(address, password), owner: platform })
  }
  // A tenant's own r_superadmin cannot be granted by anyone outside it: make one in the database.
  const other = yield* secondTenant()
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE users SET role_id = 'r_superadmin' WHERE lower(email) = ${other.email.toLowerCase()}`
  const tenantSuperadmin = yield* signIn(other.email, other.password)
  result.push({ kind: "tenant superadmin", client: tenantSuperadmin, owner: tenantSuperadmin })
  return result
}).pipe(Effect.orDie)

const outcome = (effect: Effect.Effect<unknown, unknown>) =>
  effect.pipe(
    Effect.map(() => "allowed"),
    Effect.catch((error) => Effect.succeed((error as { readonly _tag?: string })._tag ?? String(error)))
  )

const expectedOutcome = (kind: ActorKind, role: Role) => {
  const grants = expected[kind].grants
  return grants === null ? "RoleMissing" : grants.includes(role) ? "allowed" : "AccessDenied"
}

layer(testServer(), serverSuite)("the role model", (it) => {
  describe("POST /api/admin/users", () => {
    it.effect("creates a user only with a role the actor may grant, for every actor and role", () =>
      Effect.gen(function*() {
        for (const actor of yield* actors) {
          for (const role of roles) {
            const result = yield* outcome(actor.client.api.admin.createUser({
              payload: { email: email(role), nombre: "Target", password, role_id: role }
            }))
            assert.strictEqual(result, expectedOutcome(actor.kind, role), `${actor.kind} creating ${role}`)
          }
        }
      }))

    it.effect("an r_admin asking for r_superadmin gets 403 naming what it may grant, and no user is made", () =>
      Effect.gen(function*() {
        const platform = yield* adminClient
        const address = email("admin")
        yield* platform.api.admin.createUser({
          payload: { email: address, nombre: "Admin", password, role_id: "r_admin" }
        })
        const admin = yield* signIn(address, password)
        const wanted = email("escalation")
        const refused = yield* admin.api.admin.createUser({
          payload: { email: wanted, nombre: "Escalation", password, role_id: "r_superadmin" }
        }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "AccessDenied")
        assert.match(
          messageOf(refused),
          /cannot grant r_superadmin; it may grant r_user, r_space_admin, r_security_officer, r_admin/
        )
        const { users } = yield* platform.api.admin.listUsers()
        assert.isFalse(users.some((user) => user.email === wanted))
      }))
  })

  describe("PATCH /api/admin/users/{id}", () => {
    it.effect("changes a user's role only to a role the actor may grant, for every actor and role", () =>
      Effect.gen(function*() {
        for (const actor of yield* actors) {
          for (const role of roles) {
            const target = yield* actor.owner.api.admin.createUser({
              payload: { email: email("target"), nombre: "Target", password, role_id: "r_user" }
            })
            const result = yield* outcome(
              actor.client.api.admin.updateUser({ params: { id: target.id }, payload: { role_id: role } })
            )
            assert.strictEqual(result, expectedOutcome(actor.kind, role), `${actor.kind} changing r_user to ${role}`)
            const after = (yield* actor.owner.api.admin.listUsers()).users.find((user) => user.id === target.id)!
            assert.strictEqual(
              after.role_id,
              result === "allowed" ? role : "r_user",
              `${actor.kind} changing r_user to ${role}`
            )
          }
        }
      }))

    it.effect("blocks a user only when the actor may grant the role the user holds, for every actor and role", () =>
      Effect.gen(function*() {
        for (const actor of yield* actors) {
          for (const role of roles) {
            const target = yield* actor.owner.api.admin.createUser({
              payload: { email: email("holder"), nombre: "Holder", password, role_id: role }
            })
            const result = yield* outcome(
              actor.client.api.admin.updateUser({ params: { id: target.id }, payload: { blocked: true } })
            )
            assert.strictEqual(result, expectedOutcome(actor.kind, role), `${actor.kind} blocking a ${role}`)
            const after = (yield* actor.owner.api.admin.listUsers()).users.find((user) => user.id === target.id)!
            assert.strictEqual(after.blocked, result === "allowed", `${actor.kind} blocking a ${role}`)
          }
        }
      }))
  })

  describe("POST /api/admin/tenants", () => {
    it.effect("only the platform tenant's r_superadmin creates tenants", () =>
      Effect.gen(function*() {
        for (const actor of yield* actors) {
          const result = yield* outcome(actor.client.api.admin.createTenant({
            payload: {
              name: `Tenant ${crypto.randomUUID().slice(0, 8)}`,
              admin_email: email("first"),
              admin_password: password
            }
          }))
          assert.strictEqual(
            result,
            expected[actor.kind].createsTenants ? "allowed" : "RoleMissing",
            `${actor.kind} creating a tenant`
          )
        }
      }))

    it.effect("a superadmin made by a tenant admin (the old escalation) cannot create tenants", () =>
      Effect.gen(function*() {
        const other = yield* secondTenant()
        const refused = yield* other.client.api.admin.createUser({
          payload: { email: email("escalated"), nombre: "Escalated", password, role_id: "r_superadmin" }
        }).pipe(Effect.flip)
        assert.strictEqual(refused._tag, "AccessDenied")
        const tenant = yield* other.client.api.admin.createTenant({
          payload: {
            name: `Tenant ${crypto.randomUUID().slice(0, 8)}`,
            admin_email: email("first"),
            admin_password: password
          }
        }).pipe(Effect.flip)
        assert.strictEqual(tenant._tag, "RoleMissing")
        assert.match(messageOf(tenant), /platform/)
      }))
  })

  describe("POST /api/space-admin/assignments", () => {
    it.effect("an r_admin makes an r_user a Space Admin; non-admins get 403", () =>
      Effect.gen(function*() {
        for (const actor of yield* actors) {
          const target = yield* actor.owner.api.admin.createUser({
            payload: { email: email("spaceadmin"), nombre: "SA", password, role_id: "r_user" }
          })
          const space = yield* actor.owner.api.admin.createSpace({
            payload: { code: `s-${crypto.randomUUID().slice(0, 8)}`, name: "S" }
          })
          const result = yield* outcome(
            actor.client.api.spaceAdmin.assign({ payload: { user_id: target.id, space_id: space.id } })
          )
          assert.strictEqual(
            result,
            expectedOutcome(actor.kind, "r_space_admin"),
            `${actor.kind} assigning a Space Admin`
          )
        }
      }))
  })
})
