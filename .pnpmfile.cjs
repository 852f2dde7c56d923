/**
 * pnpm hooks. The workspace compiles with TypeScript 7 (`tsc`, the native
 * compiler), which has no JavaScript compiler API yet; the tools that parse
 * TypeScript through that API (typescript-eslint, openapi-typescript) get
 * TypeScript 5.9 as their own dependency instead of the workspace's as a peer.
 */
const compilerApiTypeScript = "5.9.3"

const usesCompilerApi = (name) =>
  name === "typescript-eslint" || name.startsWith("@typescript-eslint/") || name === "ts-api-utils" ||
  name === "openapi-typescript"

module.exports = {
  hooks: {
    readPackage(manifest) {
      if (usesCompilerApi(manifest.name) && manifest.peerDependencies?.typescript !== undefined) {
        delete manifest.peerDependencies.typescript
        manifest.dependencies = { ...manifest.dependencies, typescript: compilerApiTypeScript }
      }
      return manifest
    }
  }
}
