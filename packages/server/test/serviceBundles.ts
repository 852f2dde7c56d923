/**
 * Global setup: deletes, when the test run ends, the service bundles that
 * ServiceProcess.ts built for its test processes (`dist/main.test-<pid>.mjs`);
 * vitest ends its worker processes without running their exit handlers.
 */
import { readdirSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"

const dist = fileURLToPath(new URL("../dist/", import.meta.url))

const removeTestBundles = () => {
  let files: Array<string>
  try {
    files = readdirSync(dist)
  } catch {
    return // no dist folder: nothing was built
  }
  for (const file of files) if (/^main\.test-\d+\.mjs(\.map)?$/u.test(file)) rmSync(`${dist}${file}`, { force: true })
}

export default function setup() {
  return removeTestBundles
}
