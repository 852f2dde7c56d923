/**
 * Bundles the service into one ES module, `packages/server/dist/main.mjs`, so
 * that a (re)start loads one file instead of compiling hundreds of TypeScript
 * modules: time to healthy drops several-fold (see bench/startup.ts). Packages
 * with native or WebAssembly assets stay external and load from node_modules.
 *
 *   node packages/server/scripts/bundle.mjs [outfile]
 */
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Builds the bundle into `outfile` (relative to packages/server; it must stay inside the workspace so the external packages resolve). */
export const bundle = (outfile = "dist/main.mjs") =>
  build({
    absWorkingDir: root,
    entryPoints: ["src/main.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["@electric-sql/*", "@node-rs/*", "redis", "qrcode"],
    // Some bundled CommonJS dependencies call require(); give the ES module one.
    banner: {
      js:
        "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    sourcemap: "linked",
    logLevel: "warning"
  })

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundle(process.argv[2])
