/**
 * The CLI's catalog and administration commands against an in-process
 * server: spaces, agents, actions and their assignment, webhooks and their
 * deliveries, tenants and feature flags — each as a table for people, the
 * API's body with --json, and the server's refusal as one error line.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { jsonAnswer, localServer } from "../../server/test/LocalHttp.ts"
import { createKey, http, layer as testServer, serverSuite, TestServer } from "../../server/test/TestServer.ts"
import { cliUser, signedInAdmin, storedSession } from "./CliUser.ts"

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`

/** The body of a session-authenticated GET, as the API answers it. */
const apiBody = (path: string, configFile: string) =>
  Effect.map(
    http(path, { headers: { cookie: `Service-Token=${storedSession(configFile).sessionToken}` } }),
    (r) => r.body
  )

/** Runs `read` until `done` holds, to a 20 s deadline (the jobs worker delivers webhooks on its cycle). */
const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (value: A) => boolean) =>
  read.pipe(
    Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: done }),
    Effect.timeoutOrElse({
      duration: Duration.seconds(20),
      orElse: () => Effect.die(new Error("condition not reached in 20 s"))
    })
  )

layer(testServer({ CRON_INTERVAL_MS: "200", WEBHOOK_MAX_ATTEMPTS: "1" }), serverSuite)(
  "agent-platform catalog commands",
  (it) => {
    describe("spaces", () => {
      it.effect("create prints the space and the next step; list shows it; --json is the API's body", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const code = unique("support")
          const created = yield* admin.run("spaces", "create", "--code", code, "--name", "Customer support")
          assert.strictEqual(created.code, 0, created.stderr)
          assert.match(
            created.stdout,
            new RegExp(`^Created space ${code} \\(Customer support\\), id [0-9a-f-]{36}\\.\\n`)
          )
          assert.include(created.stdout, `Next: give it an agent with \`agent-platform agents create --space ${code}`)
          const table = yield* admin.run("spaces", "list")
          assert.match(table.stdout, /^ID +CODE +NAME$/m)
          assert.match(table.stdout, new RegExp(`^[0-9a-f-]{36} +${code} +Customer support$`, "m"))
          const json = yield* admin.runJson("spaces", "list")
          assert.deepStrictEqual(json, yield* apiBody("/api/admin/spaces", admin.configFile))

          // Other commands name the space by its code: a key bound to it.
          const space = json.spaces.find((s: { code: string }) => s.code === code)
          const key = yield* admin.runJson("keys", "create", "--name", "bound", "--scope", "chat", "--space", code)
          const keys = (yield* admin.runJson("keys", "list")).keys
          assert.strictEqual(keys.find((k: { id: string }) => k.id === key.id).space_id, space.id)
        }))

      it.effect("a taken code is the server's 409 message; a malformed one a usage error", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const code = unique("taken")
          assert.strictEqual((yield* admin.run("spaces", "create", "--code", code, "--name", "One")).code, 0)
          const again = yield* admin.run("spaces", "create", "--code", code, "--name", "Two")
          assert.strictEqual(again.code, 1)
          assert.match(again.stderr, /^error: .*(taken|exists).*\n$/i)
          const malformed = yield* admin.run("spaces", "create", "--code", "Not Valid", "--name", "Three")
          assert.strictEqual(malformed.code, 1)
          assert.match(
            malformed.stderr,
            /lowercase letters, digits, - or _.*\(see `agent-platform spaces create --help`\)\n$/
          )
        }))
    })

    describe("agents", () => {
      it.effect("create names the space by code; list filters by space; show finds the agent by name or id", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const code = unique("agents")
          assert.strictEqual((yield* admin.run("spaces", "create", "--code", code, "--name", code)).code, 0)
          const name = unique("Support")
          const agent = yield* admin.runJson(
            "agents",
            "create",
            "--space",
            code,
            "--name",
            name,
            "--summary",
            "Orders, returns and refunds",
            "--primary",
            "--instructions",
            "Be brief."
          )
          assert.deepInclude(agent, {
            name,
            space_code: code,
            is_primary: true,
            always_on: false,
            instructions: "Be brief.",
            action_ids: []
          })

          const table = yield* admin.run("agents", "list", "--space", code)
          const lines = table.stdout.trimEnd().split("\n")
          assert.match(lines[0], /^ID +NAME +SPACE +PRIMARY +ALWAYS ON +ACTIONS +CREATED$/)
          assert.strictEqual(lines.length, 2)
          assert.match(lines[1], new RegExp(`^${agent.id} +${name} +${code} +yes +no +0 +\\d{4}-`))

          for (const ref of [name, agent.id]) {
            const shown = yield* admin.run("agents", "show", ref)
            assert.strictEqual(shown.code, 0, shown.stderr)
            assert.match(shown.stdout, new RegExp(`^id +${agent.id}$`, "m"))
            assert.match(shown.stdout, /^summary +Orders, returns and refunds$/m)
            assert.match(shown.stdout, /^instructions +Be brief\.$/m)
          }
          assert.deepStrictEqual(yield* admin.runJson("agents", "show", name), agent)
        }))

      it.effect("an unknown space or agent says so and where to look", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const space = yield* admin.run("agents", "create", "--space", "nowhere", "--name", "A", "--summary", "B")
          assert.strictEqual(space.code, 1)
          assert.strictEqual(space.stderr, "error: space nowhere not found: `agent-platform spaces list` shows them\n")
          const agent = yield* admin.run("agents", "show", "Nobody")
          assert.strictEqual(agent.stderr, "error: agent Nobody not found: `agent-platform agents list` shows them\n")
        }))
    })

    describe("actions", () => {
      it.effect("create takes parameters and headers; list shows them; assign adds by name, --replace sets", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const code = unique("actions")
          assert.strictEqual((yield* admin.run("spaces", "create", "--code", code, "--name", code)).code, 0)
          const agentName = unique("Helpdesk")
          const agent = yield* admin.runJson(
            "agents",
            "create",
            "--space",
            code,
            "--name",
            agentName,
            "--summary",
            "Tickets"
          )
          const ticket = unique("create_ticket").replaceAll("-", "_")
          const action = yield* admin.runJson(
            "actions",
            "create",
            "--name",
            ticket,
            "--description",
            "Create a support ticket",
            "--endpoint",
            "https://tickets.example.com/tickets",
            "--header",
            "X-Team: support",
            "--param",
            "title:string:required:What is wrong",
            "--param",
            "priority:string:optional:low, normal or high"
          )
          assert.deepInclude(action, {
            name: ticket,
            http_method: "POST",
            headers: { "X-Team": "support" },
            is_active: true,
            requires_confirmation: false
          })
          assert.deepStrictEqual(action.parameters, [
            { name: "title", type: "string", required: true, description: "What is wrong" },
            { name: "priority", type: "string", required: false, description: "low, normal or high" }
          ])
          const lookup = unique("lookup").replaceAll("-", "_")
          const other = yield* admin.runJson(
            "actions",
            "create",
            "--name",
            lookup,
            "--description",
            "Look up an order",
            "--method",
            "GET",
            "--endpoint",
            "https://orders.example.com/{id}",
            "--param",
            "id:string"
          )

          const table = yield* admin.run("actions", "list")
          assert.match(table.stdout, /^ID +NAME +METHOD +URL +PARAMS +ACTIVE +CONFIRM$/m)
          assert.match(
            table.stdout,
            new RegExp(
              `^${action.id} +${ticket} +POST +https://tickets\\.example\\.com/tickets +title\\*,priority +yes +no$`,
              "m"
            )
          )

          const first = yield* admin.run("actions", "assign", "--agent", agentName, "--action", ticket)
          assert.strictEqual(first.code, 0, first.stderr)
          assert.strictEqual(first.stdout, `Agent ${agentName} may run: ${ticket}.\n`)
          const second = yield* admin.run("actions", "assign", "--agent", agent.id, "--action", other.id)
          const runs = second.stdout.match(/^Agent .+ may run: (.+)\.\n$/)?.[1].split(", ")
          assert.deepStrictEqual(runs?.sort(), [ticket, lookup].sort())
          const replaced = yield* admin.run(
            "--json",
            "actions",
            "assign",
            "--agent",
            agentName,
            "--action",
            lookup,
            "--replace"
          )
          assert.deepStrictEqual(JSON.parse(replaced.stdout).action_ids, [other.id])
          const unknown = yield* admin.run("actions", "assign", "--agent", agentName, "--action", "no_such_action")
          assert.strictEqual(unknown.code, 1)
          assert.strictEqual(
            unknown.stderr,
            "error: action no_such_action not found: `agent-platform actions list` shows them\n"
          )
        }))

      it.effect("a malformed parameter is a usage error naming the flag", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const result = yield* admin.run(
            "actions",
            "create",
            "--name",
            "x",
            "--description",
            "y",
            "--endpoint",
            "https://x.example",
            "--param",
            "title:text"
          )
          assert.strictEqual(result.code, 1)
          assert.match(
            result.stderr,
            /^error: Invalid value for flag --param: "title:text"\. .*"string" \| "number".*\(see `agent-platform actions create --help`\)\n$/
          )
        }))
    })

    describe("usage errors name the flag and its rule, in one line", () => {
      it.effect("a flag's state, a signing secret's length, an endpoint that is no URL", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const state = yield* admin.run("flags", "set", "feature_war_rooms=maybe")
          assert.strictEqual(state.code, 1)
          assert.strictEqual(
            state.stderr,
            "error: Invalid value for argument <flag=on|off>: \"feature_war_rooms=maybe\". Expected: feature_war_rooms is on or off (or true, false, yes, no) (see `agent-platform flags set --help`)\n"
          )
          const secret = yield* admin.run(
            "webhooks",
            "create",
            "--name",
            "short secret",
            "--endpoint",
            "https://hooks.example.com/x",
            "--signing-secret",
            "short"
          )
          assert.strictEqual(secret.code, 1)
          assert.match(
            secret.stderr,
            /^error: Invalid value for flag --signing-secret: .*Expected: 16 to 256 characters \(see `agent-platform webhooks create --help`\)\n$/
          )
          assert.notInclude(secret.stderr, "short")
          for (const command of [["actions", "create", "--description", "y"], ["webhooks", "create"]]) {
            const endpoint = yield* admin.run(...command, "--name", "x", "--endpoint", "not-a-url")
            assert.strictEqual(endpoint.code, 1)
            assert.strictEqual(
              endpoint.stderr,
              `error: Invalid value for flag --endpoint: "not-a-url". Expected: an absolute http or https URL (see \`agent-platform ${
                command.slice(0, 2).join(" ")
              } --help\`)\n`
            )
          }
        }))
    })

    describe("webhooks", () => {
      it.effect("create and list a subscription; log shows a delivery; retry schedules a dead letter again", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          // The first attempt fails (500); the retried one is accepted.
          const receiver = yield* localServer((_, count) => ({ status: count === 1 ? 500 : 204 }))
          const target = yield* localServer(() => jsonAnswer(200, { ok: true }))
          const name = unique("ops")
          const subscription = yield* admin.runJson(
            "webhooks",
            "create",
            "--name",
            name,
            "--endpoint",
            `${receiver.url}/hooks`,
            "--event",
            "on_action_executed",
            "--signing-secret",
            "a-signing-secret-of-32-characters"
          )
          assert.deepInclude(subscription, {
            name,
            event_filter: "on_action_executed",
            has_signing_secret: true,
            is_active: true
          })
          const table = yield* admin.run("webhooks", "list")
          assert.match(table.stdout, /^ID +NAME +URL +EVENTS +ACTIVE +SIGNED +DELIVERED +DEAD$/m)
          assert.match(
            table.stdout,
            new RegExp(`^${subscription.id} +${name} +${receiver.url}/hooks +on_action_executed +yes +yes +0 +0$`, "m")
          )
          assert.strictEqual((yield* admin.run("webhooks", "log", subscription.id)).stdout, "No deliveries yet.\n")

          // An executed action is an event; the receiver answers 500 and the one allowed attempt dead-letters it.
          const action = yield* admin.runJson(
            "actions",
            "create",
            "--name",
            unique("ping").replaceAll("-", "_"),
            "--description",
            "Ping",
            "--method",
            "GET",
            "--endpoint",
            `${target.url}/ping`
          )
          const { key } = yield* createKey(["actions"])
          const client = yield* (yield* TestServer).client({ apiKey: key })
          yield* client.api.actions.execute({ params: { id: action.id }, payload: {} })
          const dead = yield* eventually(
            Effect.map(admin.run("--json", "webhooks", "log", subscription.id), (r) => JSON.parse(r.stdout)),
            (page) => page.deliveries[0]?.status === "dead_letter"
          )
          const delivery = dead.deliveries[0]
          const log = yield* admin.run("webhooks", "log", subscription.id, "--limit", "5")
          assert.match(log.stdout, /^DELIVERY +EVENT +STATUS +ATTEMPTS +HTTP +ERROR +CREATED +NEXT ATTEMPT$/m)
          assert.match(log.stdout, new RegExp(`^${delivery.id} +on_action_executed +dead_letter +1 +500 `, "m"))

          const retried = yield* admin.run("webhooks", "retry", subscription.id, delivery.id)
          assert.strictEqual(retried.code, 0, retried.stderr)
          assert.match(retried.stdout, new RegExp(`^${delivery.id}: `))
          // Once delivered, it is no dead letter any more: a second retry is refused.
          yield* eventually(
            Effect.map(admin.run("--json", "webhooks", "log", subscription.id), (r) => JSON.parse(r.stdout)),
            (page) => page.deliveries[0]?.status === "delivered"
          )
          const again = yield* admin.run("webhooks", "retry", subscription.id, delivery.id)
          assert.strictEqual(again.code, 1)
          assert.match(again.stderr, /^error: .*dead_letter.*\n$/)
          const unknown = yield* admin.run("webhooks", "retry", subscription.id, crypto.randomUUID())
          assert.strictEqual(unknown.code, 1)
          assert.match(unknown.stderr, /^error: .*not found.*\n$/i)
        }))
    })

    describe("tenants and flags", () => {
      it.effect("tenants create takes the administrator's password from stdin; they can then sign in", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const email = `${unique("admin")}@acme.example`
          const created = yield* admin.runWith(
            { stdin: "Acme-Admin-Passw0rd\n" },
            "tenants",
            "create",
            "--name",
            "Acme",
            "--admin-email",
            email,
            "--password-stdin"
          )
          assert.strictEqual(created.code, 0, created.stderr)
          assert.match(
            created.stdout,
            new RegExp(`^Created tenant Acme, id [0-9a-f-]{36}, with administrator ${email}\\.$`, "m")
          )
          const acme = yield* cliUser
          const login = yield* acme.login(email, "Acme-Admin-Passw0rd")
          assert.strictEqual(login.code, 0, login.stderr)
          assert.match((yield* acme.run("whoami")).stdout, /^role +r_admin$/m)
          // Only a superadmin creates tenants.
          const refused = yield* acme.runWith(
            { stdin: "Other-Admin-Passw0rd\n" },
            "tenants",
            "create",
            "--name",
            "Other",
            "--admin-email",
            `${unique("x")}@x.example`,
            "--password-stdin"
          )
          assert.strictEqual(refused.code, 1)
          assert.match(refused.stderr, /^error: .+\n$/)
        }))

      it.effect("flags get shows every flag; set changes the named ones only", () =>
        Effect.gen(function*() {
          const admin = yield* signedInAdmin
          const before = yield* admin.runJson("flags", "get")
          const set = yield* admin.run("flags", "set", "feature_war_rooms=on", "feature_compliance_pack=off")
          assert.strictEqual(set.code, 0, set.stderr)
          assert.match(set.stdout, /^feature_war_rooms +on$/m)
          assert.match(set.stdout, /^feature_compliance_pack +off$/m)
          const after = yield* admin.runJson("flags", "get")
          assert.deepStrictEqual(after, { ...before, feature_war_rooms: true, feature_compliance_pack: false })
          assert.deepStrictEqual(after, yield* apiBody("/api/admin/tenant/flags", admin.configFile))
          const bad = yield* admin.run("flags", "set", "feature_teleport=on")
          assert.strictEqual(bad.code, 1)
          assert.match(bad.stderr, /^error: .*feature_war_rooms.*\(see `agent-platform flags set --help`\)\n$/)
        }))
    })
  }
)
