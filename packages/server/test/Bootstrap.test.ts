/**
 * The first start: the bootstrap superadmin's password (generated, random in
 * every position, or BOOTSTRAP_ADMIN_PASSWORD, which must meet the password
 * policy), and the start-up checks that stop the service with one line before
 * anything is created. (Spawns the service as `pnpm start` runs it.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { brokenRules, defaultPolicy } from "../src/SecurityPolicies/PasswordPolicies.ts"
import { generateAdminPassword } from "../src/Tenants/Bootstrap.ts"
import { freePort, healthy, run } from "./ServiceProcess.ts"

/** A data directory path that does not exist yet, removed after the test. */
const freshDataDir = Effect.acquireRelease(
  Effect.sync(() => join(mkdtempSync(join(tmpdir(), "agent-platform-bootstrap-")), "data")),
  (dir) => Effect.sync(() => rmSync(join(dir, ".."), { recursive: true, force: true }))
)

/** A port held by another listener for the rest of the test. */
const busyPort = Effect.acquireRelease(
  Effect.promise(() =>
    freePort().then((port) =>
      new Promise<{ readonly port: number; readonly close: () => void }>((resolve) => {
        const server = createServer().listen(port, "127.0.0.1", () => resolve({ port, close: () => server.close() }))
      })
    )
  ),
  (held) => Effect.sync(held.close)
)

describe("the generated bootstrap password", () => {
  it("meets the default password policy, 20 characters", () => {
    for (let i = 0; i < 500; i++) {
      const password = generateAdminPassword()
      assert.strictEqual(password.length, 20)
      assert.deepStrictEqual(brokenRules(defaultPolicy, password), [], password)
    }
  })

  it("is random in every position: no position keeps a fixed character or class", () => {
    const passwords = Array.from({ length: 2000 }, generateAdminPassword)
    for (let position = 0; position < 20; position++) {
      const seen = new Set(passwords.map((password) => password[position]))
      // 57 equally likely characters: 2,000 draws leave none unseen but by a vanishing chance; 40 is a loose floor.
      assert.isAbove(seen.size, 40, `position ${position}`)
      for (const kind of [/[A-Z]/, /[a-z]/, /[0-9]/]) {
        assert.isTrue([...seen].some((char) => kind.test(char)), `position ${position} never holds ${kind}`)
      }
    }
    assert.strictEqual(new Set(passwords).size, passwords.length)
  })
})

describe("the first start", () => {
  it.live(
    "without BOOTSTRAP_ADMIN_PASSWORD prints a generated password once, and it signs in",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* freshDataDir
        let signedIn = false
        const exited = yield* run({ DATA_DIR: dataDir }, async (url, stdout) => {
          const password = stdout.match(/^Generated password \(shown once, store it now\): (\S+)$/m)?.[1]
          if (password === undefined || !(await healthy(url))) return false
          const login = await fetch(`${url}/api/auth/login`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: "admin@example.com", password })
          })
          signedIn = login.status === 200
          return true
        })
        assert.isTrue(exited.sawReady, exited.stderr)
        assert.isTrue(signedIn)
        assert.strictEqual(exited.code, 0, exited.stderr)
        const password = exited.stdout.match(/^Generated password \(shown once, store it now\): (\S+)$/m)![1]
        assert.deepStrictEqual(brokenRules(defaultPolicy, password), [])
        assert.isFalse(password.endsWith("Aa7!"))
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a BOOTSTRAP_ADMIN_PASSWORD that breaks the policy stops it with one line, exit 1, nothing created",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* freshDataDir
        const exited = yield* run({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN_PASSWORD: "short1" })
        assert.strictEqual(exited.code, 1)
        assert.strictEqual(
          exited.stderr,
          "Invalid configuration: BOOTSTRAP_ADMIN_PASSWORD breaks the password policy: Password must have at least 12 characters, an uppercase letter. Unset it to have one generated.\n"
        )
        assert.strictEqual(exited.stdout, "")
        assert.isFalse(existsSync(dataDir))
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a busy port stops it with one line, exit 1, before the database or a tenant is created",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* freshDataDir
        const { port } = yield* busyPort
        const exited = yield* run({
          DATA_DIR: dataDir,
          PORT: String(port),
          BOOTSTRAP_ADMIN_PASSWORD: "Busy-Port-Passw0rd"
        })
        assert.strictEqual(exited.code, 1)
        assert.strictEqual(
          exited.stderr,
          `Cannot listen on 127.0.0.1:${port}: the port is in use by another process (another \`pnpm start\`?). Stop it, or set PORT to a free port.\n`
        )
        assert.notInclude(exited.stdout, "Created tenant")
        assert.isFalse(existsSync(dataDir))
      }).pipe(Effect.scoped),
    60_000
  )
})
