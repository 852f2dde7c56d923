export { root } from "./Root.ts"
