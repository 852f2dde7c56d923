/** The version of the running service, read from the server package. */
import { Context } from "effect"
import { readFileSync } from "node:fs"

const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  readonly version: string
}

export const ServiceVersion = Context.Reference<string>("@agent-platform/server/Platform/ServiceVersion", {
  defaultValue: () => packageJson.version
})
