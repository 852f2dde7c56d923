/** Every migration, in order. Never edit a landed migration: add the next one. */
import * as Migrator from "effect/sql/Migrator"
import foundation from "./0001_foundation.ts"

export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation
})
