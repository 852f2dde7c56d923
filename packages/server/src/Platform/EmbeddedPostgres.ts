/**
 * Embedded PostgreSQL: PGlite (PostgreSQL compiled to WASM, running inside this
 * process) behind the same driver the service uses for a real server,
 * `@effect/sql-pg`.
 *
 * Why this shape:
 * - One driver, one code path. sql-pg speaks the PostgreSQL wire protocol itself
 *   and accepts a custom `stream: () => Duplex` per connection. Handing it an
 *   in-process Duplex that feeds PGlite's backend means both modes share the
 *   binary codecs, the Migrator, the error classification and transactions.
 *   A second adapter over `PGlite.query` decodes several types differently and
 *   is slower.
 * - PGlite has exactly one backend. The transport multiplexes sql-pg's pooled
 *   "connections" onto it by running whole protocol cycles atomically and by
 *   holding a per-database lock while a transaction is open, so statements of
 *   different connections never interleave (`@electric-sql/pglite-socket`
 *   interleaves them and is not used here).
 * - Nothing in PGlite stops two processes from opening the same directory, and
 *   when two do, writes are silently lost; so `open` takes a lock file.
 *
 * Behaviour that differs from a PostgreSQL server (design for it): transactions
 * run one at a time and every other query waits while one is open; session
 * advisory locks exclude nothing; session settings (`SET`, temp tables) leak
 * between pooled connections (use `SET LOCAL`); queries run synchronously on
 * the event loop and cannot be cancelled; `COPY ... FROM STDIN` is unsupported;
 * PGlite is PostgreSQL 18, production may be 15, so keep SQL 15-compatible.
 *
 * @since 1.0.0
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { NodeFS } from "@electric-sql/pglite/nodefs"
import { Context, Effect, Layer, Schema } from "effect"
import type * as Scope from "effect/Scope"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Duplex } from "node:stream"
import * as PgFloat4Arrays from "./PgFloat4Arrays.ts"

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

/**
 * Another live process (or this one) already has the data directory open.
 * Two PGlite instances on one directory silently lose writes, so this is fatal.
 */
export class DataDirLocked extends Schema.TaggedError<DataDirLocked>()("DataDirLocked", {
  dataDir: Schema.String,
  pid: Schema.Number,
  message: Schema.String
}) {}

/** Opening, initialising or closing the embedded database failed. */
export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  message: Schema.String,
  cause: Schema.Defect()
}) {}

// -----------------------------------------------------------------------------
// Options
// -----------------------------------------------------------------------------

/** Where the embedded database lives. */
export interface OpenOptions {
  /** Directory holding PGDATA; `undefined` keeps the database in memory. */
  readonly dataDir: string | undefined
  /**
   * A tarball from `dumpDataDir()` to start from (e.g. a migrated template for
   * tests). The target directory must not already contain a database.
   */
  readonly loadDataDir?: Blob | File | undefined
}

/** Pool settings that may be tuned; transport, TLS and credentials are fixed. */
export type ClientOptions = Omit<
  PgClient.PgPoolConfig,
  "url" | "host" | "port" | "path" | "stream" | "ssl" | "username" | "password" | "database"
>

/** Options of {@link layer}. */
export interface LayerOptions extends OpenOptions {
  /** Overrides of the sql-pg pool settings chosen for PGlite. */
  readonly client?: ClientOptions | undefined
}

// -----------------------------------------------------------------------------
// Lock file
// -----------------------------------------------------------------------------

/** Name of the lock file inside the data directory (PostgreSQL ignores it). */
export const lockFileName = ".lock"

/**
 * Data directories this process holds. A lock file naming our own pid is ours
 * only if it is in this set; otherwise it is left over from an earlier process
 * that had the same pid (common in containers, where the service is pid 1).
 */
const heldDataDirs = new Set<string>()

/**
 * A process's state and start time from `/proc/<pid>/stat` (Linux), or
 * undefined where there is no such file (another OS, or no such process).
 */
const procStat = (pid: number): { readonly state: string; readonly startTime: string } | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) may contain spaces and parentheses: fields are counted after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { state: fields[0] ?? "", startTime: fields[19] ?? "" }
  } catch {
    return undefined
  }
}

/** This process's start time, written into the lock so that a reused pid is told apart. */
const ownStartTime = (): string => procStat(process.pid)?.startTime ?? ""

/**
 * Whether the lock's owner still runs. A process killed with `kill -9` stays
 * a zombie until its parent reaps it, and `kill(pid, 0)` succeeds on a
 * zombie: on Linux, its state in `/proc` says it is dead (Z, X), and a start
 * time other than the lock's says the pid now belongs to another process.
 */
const isAlive = (owner: LockOwner): boolean => {
  const stat = procStat(owner.pid)
  if (stat !== undefined) {
    if (stat.state === "Z" || stat.state === "X" || stat.state === "x") return false
    return owner.startTime === "" || stat.startTime === "" || stat.startTime === owner.startTime
  }
  try {
    process.kill(owner.pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

interface LockOwner {
  readonly pid: number
  readonly startTime: string
}

const readLockOwner = (lockPath: string): LockOwner | undefined => {
  try {
    const [pidLine = "", startTime = ""] = Fs.readFileSync(lockPath, "utf8").split("\n")
    const pid = Number.parseInt(pidLine.trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? { pid, startTime: startTime.trim() } : undefined
  } catch {
    return undefined
  }
}

const lockContent = () => `${process.pid}\n${ownStartTime()}\n`

/**
 * Keeps the data directory private whatever the umask: the directory and
 * every directory below it 0700, every file 0600 (files an older version left
 * wider are narrowed), and this process's umask 077 for what the process
 * creates there itself (PGlite's own files: see {@link PrivateNodeFS}).
 */
const securePermissions = (dataDir: string): void => {
  Fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  try {
    process.umask(0o077)
  } catch {
    // Worker threads cannot change the umask; the chmod below still narrows what exists.
  }
  const narrow = (path: string) => {
    const stat = Fs.lstatSync(path)
    if (stat.isSymbolicLink()) return
    if (stat.isDirectory()) {
      if ((stat.mode & 0o777) !== 0o700) Fs.chmodSync(path, 0o700)
      for (const entry of Fs.readdirSync(path)) narrow(Path.join(path, entry))
    } else if ((stat.mode & 0o777) !== 0o600) {
      Fs.chmodSync(path, 0o600)
    }
  }
  narrow(dataDir)
}

const lockedError = (displayDir: string, dataDir: string, pid: number) =>
  new DataDirLocked({
    dataDir,
    pid,
    message: pid === process.pid
      ? `DATA_DIR ${displayDir} is already open in this process (pid ${pid}); ` +
        `close it first or set DATA_DIR to another folder`
      : `DATA_DIR ${displayDir} is in use by another process (pid ${pid}); ` +
        `stop it or set DATA_DIR to another folder`
  })

/**
 * Creates `<dataDir>/.lock` exclusively (`wx`) with our pid. An existing lock
 * whose pid is alive (or held by this process) fails with `DataDirLocked`; a
 * lock left by a dead process is taken over.
 */
const acquireLockFile = (
  displayDir: string,
  dataDir: string
): Effect.Effect<string, DataDirLocked | EmbeddedPostgresError> =>
  Effect.suspend((): Effect.Effect<string, DataDirLocked | EmbeddedPostgresError> => {
    const lockPath = Path.join(dataDir, lockFileName)
    try {
      securePermissions(dataDir)
      for (let attempt = 0; attempt < 5; attempt++) {
        if (heldDataDirs.has(dataDir)) {
          return Effect.fail(lockedError(displayDir, dataDir, process.pid))
        }
        try {
          Fs.writeFileSync(lockPath, lockContent(), { flag: "wx", mode: 0o600 })
          heldDataDirs.add(dataDir)
          return Effect.succeed(lockPath)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        }
        const owner = readLockOwner(lockPath)
        if (owner !== undefined && owner.pid !== process.pid && isAlive(owner)) {
          return Effect.fail(lockedError(displayDir, dataDir, owner.pid))
        }
        // Stale (a dead or zombie owner, a reused pid, unreadable, or our pid from a previous incarnation).
        Fs.rmSync(lockPath, { force: true })
      }
      throw new Error(`could not create ${lockPath}`)
    } catch (cause) {
      return Effect.fail(
        new EmbeddedPostgresError({ message: `Cannot lock DATA_DIR ${displayDir}: ${String(cause)}`, cause })
      )
    }
  })

const releaseLockFile = (dataDir: string, lockPath: string): Effect.Effect<void> =>
  Effect.sync(() => {
    heldDataDirs.delete(dataDir)
    if (readLockOwner(lockPath)?.pid === process.pid) Fs.rmSync(lockPath, { force: true })
  })

/** Only the owner's permission bits: `0o666` becomes `0o600`, `0o777` `0o700` (the file-type bits stay). */
const ownerOnly = (mode: number): number => mode & ~0o077

/** The part of emscripten's NODEFS that creates nodes and sets their modes. */
interface NodeFsOps {
  readonly node_ops: Record<string, (...args: Array<any>) => unknown>
  readonly stream_ops: Record<string, (...args: Array<any>) => unknown>
}

/**
 * PGlite's Node file system, creating every file 0600 and directory 0700.
 * PostgreSQL inside WebAssembly asks for 0666 and then `chmod`s to it
 * explicitly, which the umask does not narrow; so the modes it asks for are
 * narrowed to the owner's bits before they reach the disk.
 */
class PrivateNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS["init"]>[1]) {
    const narrowModes = (mod: { readonly FS: { readonly filesystems: { readonly NODEFS: NodeFsOps } } }) => {
      const nodefs = mod.FS.filesystems.NODEFS
      const { mknod, setattr } = nodefs.node_ops
      const streamSetattr = nodefs.stream_ops.setattr
      nodefs.node_ops.mknod = (parent, name, mode: number, dev) => mknod(parent, name, ownerOnly(mode), dev)
      nodefs.node_ops.setattr = (node, attr: { readonly mode?: number | null }) =>
        setattr(node, attr.mode == null ? attr : { ...attr, mode: ownerOnly(attr.mode) })
      nodefs.stream_ops.setattr = (stream, attr: { readonly mode?: number | null }) =>
        streamSetattr(stream, attr.mode == null ? attr : { ...attr, mode: ownerOnly(attr.mode) })
    }
    return super.init(pg, { ...opts, preRun: [narrowModes as never, ...(opts.preRun ?? [])] })
  }
}

// -----------------------------------------------------------------------------
// open
// -----------------------------------------------------------------------------

/**
 * Opens PGlite with the extensions the service uses (`vector`, `pg_trgm`;
 * extensions must be registered here, `CREATE EXTENSION` alone fails).
 * For a data directory, takes the lock file first; on scope close, closes the
 * database and then removes the lock.
 *
 * Start-up cost (measured, Node 20, 2 cores; the first open in a process also
 * compiles the WASM module, ~1.5 s): new directory ~4.5 s (initdb), reopen
 * ~0.3 s, in memory ~1.5 s, in memory from a `loadDataDir` tarball ~0.8 s
 * (into a directory ~1.7 s). Each instance costs ~400 MB of RSS.
 */
export const open = Effect.fnUntraced(function*(
  options: OpenOptions
): Effect.fn.Return<PGlite, DataDirLocked | EmbeddedPostgresError, Scope.Scope> {
  const dataDir = options.dataDir === undefined ? undefined : Path.resolve(options.dataDir)
  if (dataDir !== undefined) {
    yield* Effect.acquireRelease(
      acquireLockFile(options.dataDir!, dataDir),
      (lockPath) => releaseLockFile(dataDir, lockPath)
    )
  }
  const db = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        PGlite.create({
          ...(dataDir === undefined ? { dataDir: "memory://" } : { fs: new PrivateNodeFS(dataDir) }),
          extensions: { vector, pg_trgm },
          ...(options.loadDataDir !== undefined ? { loadDataDir: options.loadDataDir } : {})
        }),
      catch: (cause) =>
        new EmbeddedPostgresError({
          message: `Cannot open the embedded database${
            options.dataDir === undefined ? "" : ` in DATA_DIR ${options.dataDir}`
          }: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    }),
    (db) => Effect.ignore(Effect.tryPromise(() => db.closed ? Promise.resolve() : db.close()))
  )
  if (dataDir !== undefined && options.loadDataDir !== undefined) {
    // A tarball dumped from a directory carries that directory's lock file.
    yield* Effect.sync(() => Fs.writeFileSync(Path.join(dataDir, lockFileName), lockContent(), { mode: 0o600 }))
  }
  return db as PGlite
})

// -----------------------------------------------------------------------------
// In-process transport
// -----------------------------------------------------------------------------

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const NO = Buffer.from("N")
const SYNC = Buffer.from([0x53, 0, 0, 0, 4])
const NOOP_CHANNEL = "pglite_transport_noop"

const cstring = (value: string) => Buffer.concat([Buffer.from(value, "utf8"), Buffer.from([0])])

const message = (type: string, body: Buffer): Buffer => {
  const header = Buffer.alloc(5)
  header.write(type, 0, "latin1")
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

const simpleQuery = (sql: string) => message("Q", cstring(sql))

const readCString = (buffer: Buffer, offset: number): [string, number] => {
  const end = buffer.indexOf(0, offset)
  return [buffer.toString("utf8", offset, end), end + 1]
}

const quoteIdentifier = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`

/** `LISTEN x` / `UNLISTEN x|*` as sql-pg sends them; channel normalised like PostgreSQL does. */
const parseListen = (sql: string): { readonly listen: boolean; readonly channel: string } | undefined => {
  const match = /^\s*(UN)?LISTEN\s+("(?:[^"]|"")+"|[^\s;]+|\*)\s*;?\s*$/i.exec(sql)
  if (match === null) return undefined
  const raw = match[2]!
  const channel = raw.startsWith("\"") ? raw.slice(1, -1).replaceAll("\"\"", "\"") : raw.toLowerCase()
  return { listen: match[1] === undefined, channel }
}

/**
 * State shared by all virtual connections of one PGlite instance.
 *
 * The lock is PGlite's own transaction mutex (the one `db.query` and
 * `db.transaction` take), so direct use of the PGlite instance can never run
 * inside a transaction a pooled connection has open, and vice versa.
 */
class Backend {
  readonly connections = new Set<VirtualConnection>()
  /** Which virtual connections `LISTEN` on which channel (the backend's LISTEN set is shared). */
  readonly listeners = new Map<string, Set<VirtualConnection>>()

  constructor(readonly db: PGlite) {}

  acquire(): Promise<() => void> {
    return new Promise((resolve, reject) => {
      this.db._runExclusiveTransaction(() => new Promise<void>((release) => resolve(() => release()))).catch(reject)
    })
  }

  /** Runs one cycle on the backend and returns its raw reply. */
  async exec(batch: Buffer): Promise<Buffer> {
    if (this.db.closed) throw new Error("The embedded database is closed")
    const chunks: Array<Buffer> = []
    await this.db.runExclusive(() =>
      this.db.execProtocolRawStream(batch, {
        // PGlite hands out a view of WASM memory that is reused: copy it.
        onRawData: (bytes) => chunks.push(Buffer.from(bytes))
      })
    )
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
  }

  /**
   * Copies every NotificationResponse of a reply to the other connections.
   * The backend is shared, so a NOTIFY's delivery lands in whichever connection
   * ran the cycle; sql-pg drops notifications for channels it does not listen on.
   */
  broadcast(reply: Buffer, from: VirtualConnection): void {
    if (this.connections.size < 2) return
    let offset = 0
    while (offset + 5 <= reply.length) {
      const length = reply.readInt32BE(offset + 1)
      const end = offset + 1 + length
      if (reply[offset] === 0x41 /* A */) {
        const notification = reply.subarray(offset, end)
        for (const connection of this.connections) {
          if (connection !== from) connection.deliver(notification)
        }
      }
      offset = end
    }
  }

  listening(channel: string, except: VirtualConnection): boolean {
    for (const connection of this.listeners.get(channel) ?? []) {
      if (connection !== except) return true
    }
    return false
  }

  removeListener(channel: string, connection: VirtualConnection): void {
    const set = this.listeners.get(channel)
    set?.delete(connection)
    if (set?.size === 0) this.listeners.delete(channel)
  }
}

const backends = new WeakMap<PGlite, Backend>()

const backendOf = (db: PGlite): Backend => {
  let backend = backends.get(db)
  if (backend === undefined) {
    backend = new Backend(db)
    backends.set(db, backend)
  }
  return backend
}

/**
 * One sql-pg connection. Incoming bytes are cut into protocol messages and
 * grouped into cycles ending with Sync, Query or Flush; each cycle runs
 * atomically on the shared backend and its reply is pushed to the readable
 * side. The lock stays held while a transaction is open or after a Flush
 * (until the Sync), so other connections see neither.
 */
class VirtualConnection extends Duplex {
  private inbox: Buffer = Buffer.alloc(0)
  private pending: Array<Buffer> = []
  private started = false
  private ready = false
  private hungUp = false
  private eofPushed = false
  private shuttingDown: Promise<void> | undefined
  private release: (() => void) | undefined
  private work: Promise<void> = Promise.resolve()
  private readonly prepared = new Set<string>()
  private readonly channels = new Set<string>()

  constructor(private readonly backend: Backend) {
    super()
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    try {
      this.receive(chunk)
      callback()
    } catch (error) {
      callback(error as Error)
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.shutdown().then(() => {
      this.endReadable()
      callback()
    })
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    void this.shutdown()
    callback(error)
  }

  private endReadable(): void {
    if (this.eofPushed) return
    this.eofPushed = true
    this.push(null)
  }

  /** Pushes a NotificationResponse produced by another connection's cycle. */
  deliver(notification: Buffer): void {
    if (this.ready && !this.hungUp && !this.eofPushed) this.push(Buffer.from(notification))
  }

  private receive(chunk: Buffer): void {
    if (this.hungUp) return
    this.inbox = this.inbox.length === 0 ? chunk : Buffer.concat([this.inbox, chunk])
    while (!this.hungUp) {
      if (!this.started) {
        if (this.inbox.length < 8) return
        const length = this.inbox.readInt32BE(0)
        if (this.inbox.length < length) return
        const code = this.inbox.readInt32BE(4)
        const packet = this.inbox.subarray(0, length)
        this.inbox = this.inbox.subarray(length)
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.enqueue(async () => void this.push(NO))
        } else if (code === CANCEL_REQUEST) {
          // A running WASM call cannot be interrupted: hang up like a server
          // that processed the request.
          this.hungUp = true
          this.endReadable()
          this.destroy()
          return
        } else {
          this.started = true
          this.enqueue(() => this.cycle(Buffer.from(packet), false))
        }
        continue
      }
      if (this.inbox.length < 5) return
      const total = 1 + this.inbox.readInt32BE(1)
      if (this.inbox.length < total) return
      const type = this.inbox[0]!
      let msg = this.inbox.subarray(0, total)
      this.inbox = this.inbox.subarray(total)
      if (type === 0x58 /* X: Terminate */) {
        this.hungUp = true
        void this.shutdown().then(() => this.endReadable())
        return
      }
      msg = this.inspect(type, Buffer.from(msg))
      this.pending.push(msg)
      if (type === 0x53 /* S */ || type === 0x51 /* Q */ || type === 0x48 /* H */) {
        const batch = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending)
        this.pending = []
        this.enqueue(() => this.cycle(batch, type === 0x48))
      }
    }
  }

  /**
   * Tracks named prepared statements (closed on Terminate) and LISTEN /
   * UNLISTEN. The backend's LISTEN set is shared by all connections, so an
   * UNLISTEN of a channel another connection still listens on is replaced by a
   * harmless UNLISTEN of an unused channel.
   */
  private inspect(type: number, msg: Buffer): Buffer {
    if (type === 0x43 /* C: Close */ && msg[5] === 0x53 /* S */) {
      this.prepared.delete(readCString(msg, 6)[0])
      return msg
    }
    let sql: string
    let sqlStart: number
    let sqlEnd: number
    if (type === 0x50 /* P: Parse */) {
      const [statement, next] = readCString(msg, 5)
      if (statement !== "") this.prepared.add(statement)
      sqlStart = next
      ;[sql, sqlEnd] = readCString(msg, next)
    } else if (type === 0x51 /* Q: Query */) {
      sqlStart = 5
      ;[sql, sqlEnd] = readCString(msg, 5)
    } else {
      return msg
    }
    const listen = parseListen(sql)
    if (listen === undefined) return msg
    const backend = this.backend
    if (listen.listen) {
      this.channels.add(listen.channel)
      let set = backend.listeners.get(listen.channel)
      if (set === undefined) backend.listeners.set(listen.channel, set = new Set())
      set.add(this)
      return msg
    }
    const released = listen.channel === "*" ? [...this.channels] : [listen.channel]
    let shared = false
    for (const channel of released) {
      this.channels.delete(channel)
      backend.removeListener(channel, this)
      if (backend.listening(channel, this)) shared = true
    }
    if (!shared) return msg
    const replacement = cstring(`UNLISTEN ${quoteIdentifier(NOOP_CHANNEL)}`)
    return message(
      String.fromCharCode(type),
      Buffer.concat([msg.subarray(5, sqlStart), replacement, msg.subarray(sqlEnd)])
    )
  }

  private enqueue(task: () => Promise<void>): void {
    this.work = this.work.then(task).catch((error) => {
      this.unlock()
      this.hungUp = true
      this.destroy(error instanceof Error ? error : new Error(String(error)))
    })
  }

  private unlock(): void {
    const release = this.release
    this.release = undefined
    release?.()
  }

  private async cycle(batch: Buffer, flush: boolean): Promise<void> {
    if (this.release === undefined) this.release = await this.backend.acquire()
    const reply = await this.backend.exec(batch)
    this.backend.broadcast(reply, this)
    if (!this.ready) {
      this.ready = true
      this.backend.connections.add(this)
    }
    if (!this.destroyed && !this.eofPushed) this.push(reply)
    if (!flush && !this.backend.db.isInTransaction()) this.unlock()
  }

  /**
   * After the queued cycles: end any half-finished extended query, roll back an
   * open transaction, close the named statements this connection prepared and
   * UNLISTEN channels nobody else listens on; then release the lock.
   */
  private shutdown(): Promise<void> {
    this.hungUp = true
    if (this.shuttingDown !== undefined) return this.shuttingDown
    const backend = this.backend
    backend.connections.delete(this)
    const cleanup = async () => {
      if (!this.ready || backend.db.closed) return
      if (this.release === undefined) this.release = await backend.acquire()
      const run = async (batch: Buffer) => backend.broadcast(await backend.exec(batch), this)
      await run(SYNC)
      if (backend.db.isInTransaction()) await run(simpleQuery("ROLLBACK"))
      if (this.prepared.size > 0) {
        const closes = [...this.prepared].map((name) => message("C", Buffer.concat([Buffer.from("S"), cstring(name)])))
        this.prepared.clear()
        await run(Buffer.concat([...closes, SYNC]))
      }
      const orphans: Array<string> = []
      for (const channel of this.channels) {
        backend.removeListener(channel, this)
        if (!backend.listening(channel, this)) orphans.push(channel)
      }
      this.channels.clear()
      if (orphans.length > 0) {
        await run(simpleQuery(orphans.map((channel) => `UNLISTEN ${quoteIdentifier(channel)}`).join("; ")))
      }
    }
    this.shuttingDown = this.work.then(cleanup).catch(() => {}).finally(() => this.unlock())
    return this.shuttingDown
  }
}

/**
 * The connection factory for sql-pg's `stream` option: every call opens a new
 * virtual connection to the PGlite instance (all share its single backend).
 */
export const makeTransport = (db: PGlite): () => Duplex => {
  const backend = backendOf(db)
  return () => new VirtualConnection(backend)
}

// -----------------------------------------------------------------------------
// Services and layer
// -----------------------------------------------------------------------------

/**
 * The open PGlite instance, for what only embedded mode can do: dump the data
 * directory (e.g. a migrated template that tests open with `loadDataDir`).
 * Prefer `SqlClient` / `PgClient` for queries.
 */
export class EmbeddedDatabase extends Context.Service<EmbeddedDatabase, {
  readonly db: PGlite
  readonly dataDir: string | undefined
  /**
   * Tarball of the data directory, taken while no transaction is open so it
   * is consistent. Feed it to `open({ loadDataDir })`.
   */
  dumpDataDir(): Effect.Effect<Blob>
}>()("@agent-platform/server/Platform/EmbeddedPostgres/EmbeddedDatabase") {}

/** Builds the `EmbeddedDatabase` service for an open PGlite instance. */
export const makeEmbeddedDatabase = (db: PGlite, dataDir: string | undefined): EmbeddedDatabase["Service"] => {
  const backend = backendOf(db)
  return EmbeddedDatabase.of({
    db,
    dataDir,
    dumpDataDir: () =>
      Effect.promise(async () => {
        const release = await backend.acquire()
        try {
          return await db.dumpDataDir()
        } finally {
          release()
        }
      })
  })
}

/**
 * sql-pg pool settings for PGlite. Two connections: one may hold a LISTEN,
 * more would only queue on the single backend. Connections are cheap but each
 * (re)connect runs a startup cycle, hence the long idle timeout.
 */
export const clientConfig = (db: PGlite, options?: ClientOptions | undefined): PgClient.PgPoolConfig => ({
  maxConnections: 2,
  idleTimeout: "1 hour",
  ...options,
  stream: makeTransport(db),
  types: PgFloat4Arrays.registry,
  ssl: false,
  username: "postgres",
  database: "postgres"
})

/**
 * Provides `PgClient`, `SqlClient` and `EmbeddedDatabase` over PGlite. The pool
 * is closed before the database, and the database before the lock file goes.
 */
export const layer = (
  options: LayerOptions
): Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | EmbeddedDatabase,
  DataDirLocked | EmbeddedPostgresError | SqlError
> => {
  const database = Layer.effect(
    EmbeddedDatabase,
    Effect.map(open(options), (db) => makeEmbeddedDatabase(db, options.dataDir))
  )
  const client = PgClient.layerFrom(
    Effect.flatMap(EmbeddedDatabase, ({ db }) => PgClient.make(clientConfig(db, options.client)))
  )
  return Layer.provideMerge(client, database)
}
