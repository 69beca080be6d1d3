// One connection to the store's SQLite file: opening it (private file, WAL, busy timeout,
// migrations), transactions (`BEGIN IMMEDIATE`), and the driver errors that mean the database
// cannot be used right now.
import { accessSync, chmodSync, closeSync, constants, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { describeFsError } from '../../fs-errors.ts';
import { MissingDatabaseError, StoreUnavailableError } from '../types.ts';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.ts';

export type Row = Record<string, unknown>;

/** Prepares every statement of `sql` once; each concern keeps its own. */
export function prepare<K extends string>(db: DatabaseSync, sql: Record<K, string>): Record<K, StatementSync> {
  return Object.fromEntries(Object.entries<string>(sql).map(([name, text]) => [name, db.prepare(text)])) as Record<K, StatementSync>;
}

// SQLite primary result codes that mean "the database cannot be used right now", as opposed
// to a mistake in the SQL or the data.
const UNAVAILABLE_CODES = new Set([
  5, // SQLITE_BUSY (lock not obtained within the busy timeout)
  6, // SQLITE_LOCKED
  7, // SQLITE_NOMEM
  8, // SQLITE_READONLY (file became read-only)
  10, // SQLITE_IOERR
  11, // SQLITE_CORRUPT
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
  15, // SQLITE_PROTOCOL
  26, // SQLITE_NOTADB
]);

export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !(err instanceof Error)) return err;
  const e = err as Error & { code?: unknown; errcode?: unknown };
  if (e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' && UNAVAILABLE_CODES.has(e.errcode & 0xff)) {
    return new StoreUnavailableError(`SQLite database unavailable: ${e.message}`, { cause: err });
  }
  // Statement or database used after close().
  if (e.code === 'ERR_INVALID_STATE') {
    return new StoreUnavailableError(`SQLite database unavailable: ${e.message}`, { cause: err });
  }
  return err;
}


const CONNECTION_SQL = {
  ping: 'SELECT 1 AS one',
  probeInsert: 'INSERT INTO write_probe (filler) VALUES (zeroblob(?))',
  probeDelete: 'DELETE FROM write_probe',
  pageSize: 'PRAGMA page_size',
  beginImmediate: 'BEGIN IMMEDIATE',
  commitTx: 'COMMIT',
  savepoint: 'SAVEPOINT one_write',
  release: 'RELEASE one_write',
  rollbackTo: 'ROLLBACK TO one_write',
  dataVersion: 'PRAGMA data_version',
};

type ConnectionStatements = Record<keyof typeof CONNECTION_SQL, StatementSync>;

export class Connection {
  readonly db: DatabaseSync;
  readonly #st: ConnectionStatements;
  closed = false;
  /** Write transactions this connection has committed. */
  #writes = 0;
  #version = 0;
  #versionFresh = false;
  /** Called after each committed write transaction (the log's growth is watched from there). */
  afterCommit: (() => void) | null = null;
  /** Rows the write probe has inserted and deleted again: SQLite counts them among this connection's changes. */
  probeChanges = 0;
  /** Writes waiting for the next group commit (see `txGrouped`). */
  #grouped: { fn: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void }[] = [];

  constructor(path: string, busyTimeoutMs: number, options: { create: boolean; maxDatabaseBytes?: number }) {
    try {
      this.db = new DatabaseSync(path, { timeout: busyTimeoutMs });
    } catch (err) {
      throw toStoreError(err);
    }
    try {
      this.db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
      // Checked before anything is written: switching an empty file to WAL writes its header.
      if (!options.create && this.#schemaVersion() === 0) {
        const tables = (this.db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as Row).n as number;
        // Another program's database is not an empty one to initialise.
        if (tables > 0) throw new Error(`${path} holds tables that are not this service's; refusing to use it`);
        throw new MissingDatabaseError(path, 'no-schema');
      }
      if (options.maxDatabaseBytes !== undefined) {
        const pageSize = (this.db.prepare('PRAGMA page_size').get() as Row).page_size as number;
        this.db.exec(`PRAGMA max_page_count = ${Math.max(1, Math.floor(options.maxDatabaseBytes / pageSize))}`);
      }
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = NORMAL');
      this.db.exec('PRAGMA foreign_keys = ON');
      this.#migrate();
      this.#st = prepare(this.db, CONNECTION_SQL);
    } catch (err) {
      try {
        this.db.close();
      } catch {
        // The original error matters more.
      }
      throw toStoreError(err);
    }
  }

  #schemaVersion(): number {
    return (this.db.prepare('PRAGMA user_version').get() as Row).user_version as number;
  }

  #migrate(): void {
    const version = (): number => this.#schemaVersion();
    if (version() === SCHEMA_VERSION) return;
    this.tx(() => {
      // Re-read under the write lock: another process may have migrated meanwhile.
      const from = version();
      if (from > SCHEMA_VERSION) {
        throw new Error(`database schema version ${from} is newer than this program supports (${SCHEMA_VERSION})`);
      }
      for (let v = from; v < SCHEMA_VERSION; v++) this.db.exec(MIGRATIONS[v] as string);
      this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    });
  }

  /**
   * Changes whenever another connection (the operator CLI in another process) has committed.
   * Read at most once per turn of the event loop: a request handled in this turn was received
   * before the turn began, so a change committed elsewhere after this read cannot precede it.
   */
  dataVersion(): number {
    if (!this.#versionFresh) {
      this.#version = this.run(() => (this.#st.dataVersion.get() as Row).data_version as number);
      this.#versionFresh = true;
      setImmediate(() => {
        this.#versionFresh = false;
      });
    }
    return this.#version;
  }

  /** Changes whenever anything was committed, by this connection or another one. */
  stamp(): string {
    return `${this.dataVersion()}:${this.#writes}`;
  }

  /** Runs `fn`, turning driver errors that mean "unavailable" into StoreUnavailableError. */
  run<T>(fn: () => T): T {
    if (this.closed) throw new StoreUnavailableError('SQLite store is closed');
    try {
      return fn();
    } catch (err) {
      throw toStoreError(err);
    }
  }

  /** Answers when the database can be read. */
  ping(): void {
    this.run(() => this.#st.ping.get());
  }

  /**
   * Commits a write that needs one page of free storage and leaves nothing behind. Not counted
   * as a write: it changes nothing that readers could see.
   */
  probeWrite(): void {
    this.#transaction(() => {
      const pageSize = (this.#st.pageSize.get() as Row).page_size as number;
      const inserted = this.#st.probeInsert.run(pageSize).changes;
      const deleted = this.#st.probeDelete.run().changes;
      this.probeChanges += Number(inserted) + Number(deleted);
    }, false);
  }

  /** Runs `fn` in a write transaction (BEGIN IMMEDIATE). `fn` must be synchronous. */
  tx<T>(fn: () => T): T {
    return this.#transaction(fn, true);
  }

  /**
   * Runs `fn` in a write transaction shared with every other `txGrouped` write queued in the same
   * turn of the event loop (group commit); resolves once that transaction has committed. Each
   * write runs in its own savepoint, so one that throws is undone alone and rejects alone.
   * Live scrapes write twice each (reserve, then commit or refund); one commit per write made
   * the store's transactions the largest entry of the live profile (`npm run bench:live --
   * --profile`), and a group of writes costs about what one of them did.
   */
  txGrouped<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('SQLite store is closed'));
    return new Promise<T>((resolve, reject) => {
      if (this.#grouped.length === 0) setImmediate(() => this.commitGroup());
      this.#grouped.push({ fn, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Commits the writes queued by `txGrouped` now (also called before closing). */
  commitGroup(): void {
    if (this.#grouped.length === 0) return;
    const group = this.#grouped;
    this.#grouped = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      this.#transaction(() => {
        const st = this.#st;
        for (const { fn } of group) {
          st.savepoint.run();
          try {
            outcomes.push({ ok: true, value: fn() });
            st.release.run();
          } catch (err) {
            // Some errors (a full disk, an I/O error) end the whole transaction: then nothing of
            // the group stands, and every write of it fails with that error.
            if (!this.db.isTransaction) throw err;
            st.rollbackTo.run();
            st.release.run();
            outcomes.push({ ok: false, err: toStoreError(err) });
          }
        }
      }, true);
    } catch (err) {
      // Nothing of the group was committed.
      for (const { reject } of group) reject(err);
      return;
    }
    group.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i] as (typeof outcomes)[number];
      if (outcome.ok) resolve(outcome.value);
      else reject(outcome.err);
    });
  }

  /** `counted`: the commit counts towards the checkpoint's write tally (the probe's does not). */
  #transaction<T>(fn: () => T, counted: boolean): T {
    return this.run(() => {
      // Migrations run before the statements are prepared.
      const st = this.#st as ConnectionStatements | undefined;
      if (st) st.beginImmediate.run();
      else this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = fn();
        if (st) st.commitTx.run();
        else this.db.exec('COMMIT');
        if (counted) {
          this.#writes += 1;
          this.afterCommit?.();
        }
        return result;
      } catch (err) {
        if (this.db.isTransaction) {
          try {
            this.db.exec('ROLLBACK');
          } catch {
            // The original error matters more.
          }
        }
        throw err;
      }
    });
  }
}

// ---- files -------------------------------------------------------------------------------

/** The database file and the files SQLite keeps next to it. */
export const sqliteFiles = (path: string): string[] => [path, `${path}-wal`, `${path}-shm`];

/**
 * Makes the database file private before SQLite opens it: SQLite creates it with 0644 by
 * default, and gives the -wal and -shm files the database file's permissions. Files an earlier
 * version created more openly are tightened too. Refuses a missing or empty file unless
 * `create`, without creating anything.
 */
export function prepareFile(path: string, create: boolean): void {
  const unavailable = (err: unknown, doing: string) => new StoreUnavailableError(describeFsError(err, doing).message, { cause: err });
  let size: number | null = null;
  try {
    size = statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unavailable(err, `cannot read ${path}`);
  }
  if (!create && !size) throw new MissingDatabaseError(path, size === null ? 'missing' : 'empty');
  try {
    // SQLite needs to create the -wal and -shm files next to the database.
    accessSync(dirname(path), constants.W_OK);
    // 'a' creates the file when absent and never truncates one that exists.
    closeSync(openSync(path, 'a', 0o600));
  } catch (err) {
    throw unavailable(err, `cannot write the database ${path}`);
  }
  for (const file of sqliteFiles(path)) {
    try {
      chmodSync(file, 0o600);
    } catch (err) {
      // Absent (no -wal after a clean close), or owned by another user who keeps its mode.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw unavailable(err, `cannot make ${file} private`);
    }
  }
}
