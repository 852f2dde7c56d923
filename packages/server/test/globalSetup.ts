/**
 * Builds the migrated template every test database is opened from, once per
 * run: a PGlite data-dir dump for the embedded suite, or a template database
 * on the real PostgreSQL of `TEST_DATABASE_URL` (dropped at the end).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { migrate } from "../src/Platform/Database.ts"
import * as EmbeddedPostgres from "../src/Platform/EmbeddedPostgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    embeddedTemplate: string
    postgresTemplate: string
  }
}

const migrationsDir = new URL("../src/migrations/", import.meta.url)

const migrationsHash = () => {
  const hash = createHash("sha256")
  for (const file of readdirSync(migrationsDir).sort()) {
    hash.update(file).update(readFileSync(new URL(file, migrationsDir)))
  }
  return hash.digest("hex").slice(0, 16)
}

const buildEmbeddedTemplate = async (): Promise<string> => {
  const file = join(tmpdir(), `agent-platform-template-${migrationsHash()}.tar.gz`)
  if (existsSync(file)) return file
  const dump = await Effect.runPromise(
    Effect.gen(function*() {
      yield* migrate
      const db = yield* EmbeddedPostgres.EmbeddedDatabase
      return yield* db.dumpDataDir()
    }).pipe(Effect.provide(EmbeddedPostgres.layer({ dataDir: undefined })), Effect.scoped)
  )
  const partial = `${file}.${process.pid}`
  writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()))
  renameSync(partial, file)
  return file
}

/** Runs statements against the server of `url` outside any database the tests use. */
export const onServer = <A>(url: string, use: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(
    use.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.scoped)
  )

export default async function setup(project: TestProject) {
  const url = process.env.TEST_DATABASE_URL
  if (url === undefined || url === "") {
    project.provide("embeddedTemplate", await buildEmbeddedTemplate())
    project.provide("postgresTemplate", "")
    return
  }
  const template = `ap_template_${process.pid}_${Date.now()}`
  await onServer(url, Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE "${template}"`)))
  const templateUrl = new URL(url)
  templateUrl.pathname = `/${template}`
  await Effect.runPromise(
    migrate.pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(templateUrl.toString()), maxConnections: 1 })),
      Effect.scoped
    )
  )
  project.provide("embeddedTemplate", "")
  project.provide("postgresTemplate", template)
  return async () => {
    await onServer(
      url,
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`))
    )
  }
}
