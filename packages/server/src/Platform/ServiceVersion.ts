/** The version of the running service: the server package's, built in. */
import { Context } from "effect"
import packageJson from "../../package.json" with { type: "json" }

export const ServiceVersion = Context.Reference<string>("@agent-platform/server/Platform/ServiceVersion", {
  defaultValue: () => packageJson.version
})
