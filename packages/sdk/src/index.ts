export * from "./Client.ts"
export * from "./PromiseClient.ts"
