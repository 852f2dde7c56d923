/**
 * Every migration of this folder, by file name: `NNNN_name.ts` exporting the
 * migration Effect as default, applied in number order. Never edit a landed
 * migration: add the next number.
 *
 * The files are imported from here rather than by effect's file-system loader
 * so that whatever runs this module (tsx, vitest) also compiles them.
 */
import { Effect } from "effect"
import type * as Migrator from "effect/sql/Migrator"
import { readdirSync } from "node:fs"

const directory = new URL(".", import.meta.url)

export const migrations: Migrator.Loader = Effect.sync(() =>
  readdirSync(directory)
    .flatMap((file): ReadonlyArray<Migrator.ResolvedMigration> => {
      const match = /^(\d+)_([^.]+)\.ts$/.exec(file)
      if (match === null) return []
      // The migrator takes the module and runs its default export.
      const load = Effect.promise(() => import(/* @vite-ignore */ `./${file}`))
      return [[Number(match[1]), match[2], load]]
    })
    .sort(([a], [b]) => a - b)
)
