export { cli, version } from "./Cli.ts"
export { root } from "./Root.ts"
