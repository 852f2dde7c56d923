export * from "./ChatStream.ts"
export * from "./Client.ts"
export * from "./Knowledge.ts"
export * from "./PromiseClient.ts"
