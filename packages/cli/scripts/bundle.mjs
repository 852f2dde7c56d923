/**
 * Bundles the CLI into one self-contained ES module,
 * `packages/cli/dist/agent-platform.mjs`: the `agent-platform` binary, which
 * runs on plain Node 20 (`npm install -g` of the packed package, or `pnpm cli`
 * from the repository root). Its one dependency is the embedded database.
 *
 *   node packages/cli/scripts/bundle.mjs [outfile]
 *
 * The file is written beside its final name and renamed over it, so a
 * command running while it is rebuilt never reads half a file.
 */
import { build } from "esbuild"
import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

export const defaultOutfile = resolve(root, "dist/agent-platform.mjs")

export const bundle = async (outfile = defaultOutfile) => {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["src/main.ts"],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    outfile,
    // The embedded database (for `security reset-allowlist` on a DATA_DIR) loads its WebAssembly and
    // extension archives next to its own modules: it stays a dependency rather than part of the bundle.
    external: ["@electric-sql/*"],
    // Some bundled CommonJS dependencies call require(); give the ES module one.
    banner: {
      js:
        "#!/usr/bin/env node\nimport { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
  mkdirSync(dirname(outfile), { recursive: true })
  const partial = `${outfile}.${process.pid}.partial`
  writeFileSync(partial, result.outputFiles[0].contents)
  chmodSync(partial, 0o755)
  renameSync(partial, outfile)
  return outfile
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundle(process.argv[2] === undefined ? undefined : resolve(process.argv[2]))
}
