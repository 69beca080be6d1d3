// The embedded default: every store in one SQLite file through `node:sqlite`.
//
// The service and the operator CLI may have the same file open from different processes,
// so: WAL (readers never block the writer), a busy timeout, and every multi-statement write
// in a `BEGIN IMMEDIATE` transaction (takes the write lock up front, so two writers never
// deadlock or fail on a stale snapshot). `node:sqlite` is synchronous: a transaction never
// spans an `await`, so calls from the same process cannot interleave inside one either.

import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, closeSync, constants, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { StatementSync } from 'node:sqlite';
import { describeFsError } from '../fs-errors.ts';
import { InProcessRateLimiter } from './memory-limiter.ts';
import { pruneCache, walBytes } from './sqlite-maintenance.ts';
import type { PruneOptions } from './sqlite-maintenance.ts';
import type { WorkerData, WorkerReply, WorkerRequest } from './sqlite-worker.ts';
import { MissingDatabaseError, StoreUnavailableError } from './types.ts';
import type {
  AccountStore,
  ApiKeyRecord,
  CacheEntry,
  CacheStore,
  Ledger,
  LedgerEntry,
  NewTeam,
  ReserveResult,
  Stores,
  Team,
  Usage,
} from './types.ts';

export interface SqliteStoreOptions {
  /** File path, or ':memory:'. */
  path: string;
  /** Bound on the cache's total size (value, key and target bytes); default 1 GiB. */
  cacheMaxBytes?: number;
  /** Cache entries scraped longer ago than this are dropped by `prune`; default 30 days. */
  cacheMaxAgeMs?: number;
  /** How long a statement waits for another connection's write lock; default 5 s. */
  busyTimeoutMs?: number;
  /** How often reads recorded in memory are written to `cache.accessed_at`; default 5 s. */
  cacheTouchFlushMs?: number;
  /**
   * Whether a missing or empty file is initialised with a new, empty database (the default).
   * When false, the file must already hold this service's schema; otherwise MissingDatabaseError
   * is thrown and nothing is written.
   */
  create?: boolean;
  /** Writes that would grow the database beyond this many bytes fail as on a full disk (SQLITE_FULL). */
  maxDatabaseBytes?: number;
  /** The write-ahead log is restarted and its file truncated once it grows past this; default 32 MiB. */
  walMaxBytes?: number;
}

const GIB = 1024 ** 3;
const WAL_MAX_BYTES = 32 * 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
const SCHEMA_VERSION = 2;
/** After an eviction the cache is brought down to this share of its bound. */
const EVICT_TO = 0.9;
/** Reads remembered before a flush is forced (bounds the in-memory set). */
const MAX_TOUCHED = 10_000;
const REFUND_BATCH = 500;
/** Active keys remembered between changes of the database. */
const MAX_KNOWN_KEYS = 10_000;
/** Cache writes are gathered for this long, or up to this many bytes, then written in one transaction. */
const WRITE_DELAY_MS = 20;
const MAX_PENDING_BYTES = 8 * 1024 * 1024;
/** Bytes of recently used cache entries kept in memory in front of the table. */
const HOT_CACHE_BYTES = 64 * 1024 * 1024;

const MIGRATIONS: readonly string[] = [
  // v1
  `
  CREATE TABLE teams (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    credits     INTEGER NOT NULL CHECK (credits >= 0),
    rate_limit  INTEGER NOT NULL CHECK (rate_limit >= 1),
    created_at  TEXT NOT NULL
  ) STRICT;

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    team_id       TEXT NOT NULL REFERENCES teams (id),
    name          TEXT NOT NULL,
    hash          TEXT NOT NULL UNIQUE,
    prefix        TEXT NOT NULL,
    last4         TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT
  ) STRICT;
  CREATE INDEX api_keys_team ON api_keys (team_id);

  CREATE TABLE ledger (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id     TEXT NOT NULL REFERENCES teams (id),
    amount      INTEGER NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('topup', 'charge', 'refund')),
    request_id  TEXT,
    created_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX ledger_team ON ledger (team_id, id);
  CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
  CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;

  CREATE TABLE reservations (
    id          TEXT PRIMARY KEY,
    team_id     TEXT NOT NULL REFERENCES teams (id),
    request_id  TEXT NOT NULL,
    amount      INTEGER NOT NULL CHECK (amount > 0),
    deadline    INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'committed', 'refunded')),
    created_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX reservations_pending ON reservations (deadline) WHERE state = 'pending';
  CREATE INDEX reservations_team_pending ON reservations (team_id) WHERE state = 'pending';

  CREATE TABLE cache (
    key          TEXT PRIMARY KEY,
    target       TEXT NOT NULL,
    value        TEXT NOT NULL,
    stored_at    INTEGER NOT NULL,
    accessed_at  INTEGER NOT NULL,
    size         INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX cache_target ON cache (target);
  CREATE INDEX cache_accessed ON cache (accessed_at);
  CREATE INDEX cache_stored ON cache (stored_at);
  `,
  // v2: written and emptied again by the readiness probe (probeWrite); never holds a row.
  `
  CREATE TABLE write_probe (
    id      INTEGER PRIMARY KEY,
    filler  BLOB NOT NULL
  ) STRICT;
  `,
];

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

function toStoreError(err: unknown): unknown {
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

const newId = (prefix: string): string => `${prefix}_${randomBytes(15).toString('base64url')}`;
const isoNow = (): string => new Date().toISOString();

function checkPositiveInt(what: string, n: number): void {
  if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`${what} must be a positive integer, got ${n}`);
}

// ---- rows ------------------------------------------------------------------------------

type Row = Record<string, unknown>;

const TEAM_COLS = 'id, name, credits, rate_limit, created_at';
const KEY_COLS = 'id, team_id, name, prefix, last4, created_at, last_used_at, revoked_at';

function toTeam(r: Row): Team {
  return {
    id: r.id as string,
    name: r.name as string,
    credits: r.credits as number,
    rateLimit: r.rate_limit as number,
    createdAt: r.created_at as string,
  };
}

function toKey(r: Row): ApiKeyRecord {
  return {
    id: r.id as string,
    teamId: r.team_id as string,
    name: r.name as string,
    prefix: r.prefix as string,
    last4: r.last4 as string,
    createdAt: r.created_at as string,
    lastUsedAt: (r.last_used_at as string | null) ?? null,
    revokedAt: (r.revoked_at as string | null) ?? null,
  };
}

function toEntry(r: Row): LedgerEntry {
  return {
    id: r.id as number,
    teamId: r.team_id as string,
    amount: r.amount as number,
    reason: r.reason as LedgerEntry['reason'],
    requestId: (r.request_id as string | null) ?? null,
    createdAt: r.created_at as string,
  };
}

// ---- connection --------------------------------------------------------------------------

function prepareAll(db: DatabaseSync) {
  const p = (sql: string): StatementSync => db.prepare(sql);
  return {
    ping: p('SELECT 1 AS one'),
    // A row larger than a page, so that the probe needs a page of storage that is free now.
    probeInsert: p('INSERT INTO write_probe (filler) VALUES (zeroblob(?))'),
    probeDelete: p('DELETE FROM write_probe'),
    pageSize: p('PRAGMA page_size'),
    // Transaction control, prepared once: exec() would parse the text at every call.
    beginImmediate: p('BEGIN IMMEDIATE'),
    commitTx: p('COMMIT'),
    dataVersion: p('PRAGMA data_version'),

    insertTeam: p('INSERT INTO teams (id, name, credits, rate_limit, created_at) VALUES (?, ?, ?, ?, ?)'),
    getTeam: p(`SELECT ${TEAM_COLS} FROM teams WHERE id = ?`),
    listTeams: p(`SELECT ${TEAM_COLS} FROM teams ORDER BY created_at, id`),
    updateTeam: p('UPDATE teams SET name = coalesce(?, name), rate_limit = coalesce(?, rate_limit) WHERE id = ?'),
    teamExists: p('SELECT 1 AS one FROM teams WHERE id = ?'),

    insertKey: p(
      'INSERT INTO api_keys (id, team_id, name, hash, prefix, last4, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    getKey: p(`SELECT ${KEY_COLS} FROM api_keys WHERE id = ?`),
    findActiveKey: p(
      `SELECT k.id, k.team_id, k.name, k.prefix, k.last4, k.created_at, k.last_used_at, k.revoked_at,
              t.name AS t_name, t.credits AS t_credits, t.rate_limit AS t_rate_limit, t.created_at AS t_created_at
         FROM api_keys k JOIN teams t ON t.id = k.team_id
        WHERE k.hash = ? AND k.revoked_at IS NULL`,
    ),
    listKeys: p(`SELECT ${KEY_COLS} FROM api_keys WHERE team_id = ? ORDER BY created_at, id`),
    revokeKey: p('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    touchKey: p('UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at < ?1)'),

    balance: p('SELECT credits FROM teams WHERE id = ?'),
    credit: p('UPDATE teams SET credits = credits + ? WHERE id = ?'),
    debit: p('UPDATE teams SET credits = credits - ?1 WHERE id = ?2 AND credits >= ?1'),
    insertLedger: p('INSERT INTO ledger (team_id, amount, reason, request_id, created_at) VALUES (?, ?, ?, ?, ?)'),
    entries: p('SELECT id, team_id, amount, reason, request_id, created_at FROM ledger WHERE team_id = ? ORDER BY id DESC LIMIT ?'),
    usage: p(
      `SELECT coalesce(sum(CASE WHEN reason = 'charge' THEN -amount END), 0) AS charged,
              coalesce(sum(CASE WHEN reason = 'refund' THEN amount END), 0) AS refunded,
              coalesce(sum(CASE WHEN reason = 'topup' THEN amount END), 0) AS topped_up
         FROM ledger WHERE team_id = ?`,
    ),
    pendingCount: p("SELECT count(*) AS n FROM reservations WHERE team_id = ? AND state = 'pending'"),

    insertReservation: p(
      "INSERT INTO reservations (id, team_id, request_id, amount, deadline, state, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)",
    ),
    getReservation: p('SELECT id, team_id, request_id, amount, state FROM reservations WHERE id = ?'),
    markCommitted: p("UPDATE reservations SET state = 'committed' WHERE id = ? AND state = 'pending'"),
    markRefunded: p("UPDATE reservations SET state = 'refunded' WHERE id = ? AND state = 'pending'"),
    expired: p("SELECT id FROM reservations WHERE state = 'pending' AND deadline < ? ORDER BY deadline LIMIT ?"),

    cacheGet: p('SELECT value, stored_at, target, size FROM cache WHERE key = ?'),
    cacheSet: p(
      `INSERT INTO cache (key, target, value, stored_at, accessed_at, size) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET target = excluded.target, value = excluded.value,
         stored_at = excluded.stored_at, accessed_at = excluded.accessed_at, size = excluded.size`,
    ),
    cacheTouch: p('UPDATE cache SET accessed_at = ?1 WHERE key = ?2 AND accessed_at < ?1'),
    cacheDeleteTarget: p('DELETE FROM cache WHERE target = ?'),
  };
}

type Statements = ReturnType<typeof prepareAll>;

class Connection {
  readonly db: DatabaseSync;
  readonly st: Statements;
  closed = false;
  /** Write transactions this connection has committed. */
  #writes = 0;
  #version = 0;
  #versionFresh = false;
  /** Called after each committed write transaction (the log's growth is watched from there). */
  afterCommit: (() => void) | null = null;


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
      this.st = prepareAll(this.db);
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
      this.#version = this.run(() => (this.st.dataVersion.get() as Row).data_version as number);
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

  /**
   * Commits a write that needs one page of free storage and leaves nothing behind. Not counted
   * as a write: it changes nothing that readers could see.
   */
  probeWrite(): void {
    this.#transaction(() => {
      const pageSize = (this.st.pageSize.get() as Row).page_size as number;
      this.st.probeInsert.run(pageSize);
      this.st.probeDelete.run();
    }, false);
  }

  /** Runs `fn` in a write transaction (BEGIN IMMEDIATE). `fn` must be synchronous. */
  tx<T>(fn: () => T): T {
    return this.#transaction(fn, true);
  }

  /** `counted`: the commit counts towards the checkpoint's write tally (the probe's does not). */
  #transaction<T>(fn: () => T, counted: boolean): T {
    return this.run(() => {
      // Migrations run before the statements are prepared.
      const st = this.st as Statements | undefined;
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

// ---- accounts ----------------------------------------------------------------------------

function checkTeamFields(changes: { name?: string; rateLimit?: number; credits?: number }): void {
  if (changes.name !== undefined && (typeof changes.name !== 'string' || changes.name.trim() === '')) {
    throw new RangeError('team name must be a non-empty string');
  }
  if (changes.rateLimit !== undefined && (!Number.isSafeInteger(changes.rateLimit) || changes.rateLimit < 1)) {
    throw new RangeError(`rate limit must be an integer >= 1, got ${changes.rateLimit}`);
  }
  if (changes.credits !== undefined && (!Number.isSafeInteger(changes.credits) || changes.credits < 0)) {
    throw new RangeError(`initial credits must be an integer >= 0, got ${changes.credits}`);
  }
}

function accountStore(c: Connection): AccountStore {
  const { st } = c;
  const knownKeys = new Map<string, { stamp: string; found: { key: ApiKeyRecord; hash: string; team: Team } }>();
  return {
    async createTeam(team: NewTeam): Promise<Team> {
      checkTeamFields(team);
      const id = newId('team');
      const createdAt = isoNow();
      c.tx(() => {
        st.insertTeam.run(id, team.name, team.credits, team.rateLimit, createdAt);
        if (team.credits > 0) st.insertLedger.run(id, team.credits, 'topup', null, createdAt);
      });
      return { id, name: team.name, credits: team.credits, rateLimit: team.rateLimit, createdAt };
    },

    async getTeam(id: string): Promise<Team | null> {
      const row = c.run(() => st.getTeam.get(id));
      return row ? toTeam(row) : null;
    },

    async listTeams(): Promise<Team[]> {
      return c.run(() => st.listTeams.all()).map(toTeam);
    },

    async updateTeam(id: string, changes: { rateLimit?: number; name?: string }): Promise<Team | null> {
      checkTeamFields(changes);
      return c.run(() => {
        st.updateTeam.run(changes.name ?? null, changes.rateLimit ?? null, id);
        const row = st.getTeam.get(id);
        return row ? toTeam(row) : null;
      });
    },

    async createKey(key: { teamId: string; name: string; hash: string; prefix: string; last4: string }): Promise<ApiKeyRecord> {
      const id = newId('key');
      const createdAt = isoNow();
      c.tx(() => {
        if (!st.teamExists.get(key.teamId)) throw new Error(`unknown team ${key.teamId}`);
        st.insertKey.run(id, key.teamId, key.name, key.hash, key.prefix, key.last4, createdAt);
      });
      return {
        id,
        teamId: key.teamId,
        name: key.name,
        prefix: key.prefix,
        last4: key.last4,
        createdAt,
        lastUsedAt: null,
        revokedAt: null,
      };
    },

    async findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; hash: string; team: Team } | null> {
      // Served from memory while nothing at all has been committed since it was read (the
      // stamp covers other processes too), so a revocation or a balance change is seen by
      // the very next request.
      const stamp = c.stamp();
      const cached = knownKeys.get(hash);
      if (cached && cached.stamp === stamp) return cached.found;
      const r = c.run(() => st.findActiveKey.get(hash));
      if (!r) return null;
      if (knownKeys.size >= MAX_KNOWN_KEYS) knownKeys.clear();
      const found = {
        key: toKey(r),
        hash,
        team: {
          id: r.team_id as string,
          name: r.t_name as string,
          credits: r.t_credits as number,
          rateLimit: r.t_rate_limit as number,
          createdAt: r.t_created_at as string,
        },
      };
      knownKeys.set(hash, { stamp, found });
      return found;
    },

    async listKeys(teamId: string): Promise<ApiKeyRecord[]> {
      return c.run(() => st.listKeys.all(teamId)).map(toKey);
    },

    async revokeKey(id: string): Promise<boolean> {
      return c.tx(() => st.revokeKey.run(isoNow(), id).changes > 0);
    },

    async recordKeyUse(lastUsed: ReadonlyMap<string, string>): Promise<void> {
      if (lastUsed.size === 0) return;
      c.tx(() => {
        for (const [id, at] of lastUsed) st.touchKey.run(at, id);
      });
    },
  };
}

// ---- ledger ------------------------------------------------------------------------------

function ledger(c: Connection): Ledger {
  const { st } = c;

  const balanceOf = (teamId: string): number | null => {
    const row = st.balance.get(teamId);
    return row ? (row.credits as number) : null;
  };

  /** Gives a pending reservation back; false when it was not pending. Call inside a transaction. */
  const refundOne = (id: string): { refunded: boolean; teamId: string } | null => {
    const r = st.getReservation.get(id);
    if (!r) return null;
    const teamId = r.team_id as string;
    if (st.markRefunded.run(id).changes !== 1) return { refunded: false, teamId };
    const amount = r.amount as number;
    st.credit.run(amount, teamId);
    st.insertLedger.run(teamId, amount, 'refund', r.request_id as string, isoNow());
    return { refunded: true, teamId };
  };

  return {
    async addCredits(teamId: string, amount: number, requestId: string | null = null): Promise<number> {
      checkPositiveInt('credit amount', amount);
      return c.tx(() => {
        if (st.credit.run(amount, teamId).changes !== 1) throw new Error(`unknown team ${teamId}`);
        st.insertLedger.run(teamId, amount, 'topup', requestId, isoNow());
        return balanceOf(teamId) as number;
      });
    },

    async reserve(teamId: string, amount: number, requestId: string, deadline: number): Promise<ReserveResult> {
      checkPositiveInt('reservation amount', amount);
      if (!Number.isFinite(deadline)) throw new RangeError(`deadline must be epoch ms, got ${deadline}`);
      return c.tx((): ReserveResult => {
        const createdAt = isoNow();
        if (st.debit.run(amount, teamId).changes !== 1) {
          const balance = balanceOf(teamId);
          if (balance === null) throw new Error(`unknown team ${teamId}`);
          return { ok: false, balance };
        }
        const reservationId = newId('res');
        st.insertLedger.run(teamId, -amount, 'charge', requestId, createdAt);
        st.insertReservation.run(reservationId, teamId, requestId, amount, Math.trunc(deadline), createdAt);
        return { ok: true, reservationId, balance: balanceOf(teamId) as number };
      });
    },

    async commit(reservationId: string): Promise<{ charged: boolean; balance: number }> {
      return c.tx(() => {
        const r = st.getReservation.get(reservationId);
        if (!r) throw new Error(`unknown reservation ${reservationId}`);
        // Only a pending reservation becomes committed; a refunded one stays refunded, and its
        // charge was given back: the caller must not report it.
        const charged = st.markCommitted.run(reservationId).changes === 1 || r.state === 'committed';
        return { charged, balance: balanceOf(r.team_id as string) as number };
      });
    },

    async refund(reservationId: string): Promise<{ refunded: boolean; balance: number }> {
      return c.tx(() => {
        const result = refundOne(reservationId);
        if (!result) throw new Error(`unknown reservation ${reservationId}`);
        return { refunded: result.refunded, balance: balanceOf(result.teamId) as number };
      });
    },

    async refundExpired(now: number): Promise<number> {
      let total = 0;
      for (;;) {
        // One short transaction per batch, so the write lock is never held for long.
        const done = c.tx(() => {
          const ids = st.expired.all(now, REFUND_BATCH).map((r) => r.id as string);
          for (const id of ids) if (refundOne(id)?.refunded) total++;
          return ids.length < REFUND_BATCH;
        });
        if (done) return total;
        // A large backlog (after a crash under load) does not hold the event loop either.
        await yieldToEvents();
      }
    },

    async balance(teamId: string): Promise<number | null> {
      return c.run(() => balanceOf(teamId));
    },

    async entries(teamId: string, limit = 100): Promise<LedgerEntry[]> {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
      return c.run(() => st.entries.all(teamId, limit)).map(toEntry);
    },

    async usage(teamId: string): Promise<Usage | null> {
      // A read transaction so that the sums, the count and the balance are one snapshot.
      return c.run(() => {
        c.db.exec('BEGIN');
        try {
          const balance = balanceOf(teamId);
          if (balance === null) return null;
          const u = st.usage.get(teamId) as Row;
          const pending = st.pendingCount.get(teamId) as Row;
          return {
            teamId,
            charged: u.charged as number,
            refunded: u.refunded as number,
            toppedUp: u.topped_up as number,
            balance,
            pendingReservations: pending.n as number,
          };
        } finally {
          c.db.exec('COMMIT');
        }
      });
    },
  };
}

// ---- cache -------------------------------------------------------------------------------

interface SqliteCache extends CacheStore {
  /** Writes pending results and the access times of recent reads. */
  flush(): void;
}

function cacheStore(c: Connection, background: Background, maxBytes: number, maxAgeMs: number): SqliteCache {
  const { st } = c;
  // Reads since the last flush: key -> epoch ms of the latest read. Reads never write.
  let touched = new Map<string, number>();
  // Results stored in the last few milliseconds, written together in one transaction.
  let pendingWrites = new Map<string, { target: string; entry: CacheEntry; size: number }>();
  let pendingBytes = 0;
  let writeTimer: NodeJS.Timeout | null = null;
  const flushWrites = (): void => {
    if (writeTimer) {
      clearTimeout(writeTimer);
      writeTimer = null;
    }
    if (pendingWrites.size === 0) return;
    const batch = pendingWrites;
    pendingWrites = new Map();
    pendingBytes = 0;
    const at = Date.now();
    c.tx(() => {
      for (const [key, write] of batch) st.cacheSet.run(key, write.target, write.entry.value, write.entry.storedAt, at, write.size);
    });
  };
  // Recently used entries in memory, in least-recently-used order, valid while the database
  // stamp is unchanged by any other connection.
  const hot = new Map<string, { entry: CacheEntry; target: string; size: number }>();
  let hotBytes = 0;
  let hotVersion = -1;
  const dropHot = (key: string) => {
    const held = hot.get(key);
    if (!held) return;
    hot.delete(key);
    hotBytes -= held.size;
  };
  const keepHot = (key: string, target: string, entry: CacheEntry, size: number) => {
    dropHot(key);
    if (size > HOT_CACHE_BYTES / 8) return;
    hot.set(key, { entry, target, size });
    hotBytes += size;
    for (const oldest of hot.keys()) {
      if (hotBytes <= HOT_CACHE_BYTES) break;
      dropHot(oldest);
    }
  };
  /** Empties the memory layer when another connection has committed since it was filled. */
  const checkHot = () => {
    const version = c.dataVersion();
    if (version !== hotVersion) {
      hot.clear();
      hotBytes = 0;
      hotVersion = version;
    }
  };

  const flush = (): void => {
    if (touched.size === 0) return;
    const batch = touched;
    touched = new Map();
    try {
      c.tx(() => {
        for (const [key, at] of batch) st.cacheTouch.run(at, key);
      });
    } catch (err) {
      // Keep them for the next attempt (newer reads win).
      for (const [key, at] of batch) if (!touched.has(key)) touched.set(key, at);
      throw err;
    }
  };

  return {
    flush: () => {
      flushWrites();
      flush();
    },

    async get(key: string): Promise<CacheEntry | null> {
      checkHot();
      const held = hot.get(key);
      let entry: CacheEntry;
      if (held) {
        hot.delete(key);
        hot.set(key, held);
        entry = held.entry;
      } else if (pendingWrites.has(key)) {
        entry = (pendingWrites.get(key) as { entry: CacheEntry }).entry;
      } else {
        const row = c.run(() => st.cacheGet.get(key));
        if (!row) return null;
        entry = { value: row.value as string, storedAt: row.stored_at as number };
        keepHot(key, row.target as string, entry, row.size as number);
      }
      touched.set(key, Date.now());
      if (touched.size >= MAX_TOUCHED) {
        try {
          flush();
        } catch {
          // A read must not fail because the access times could not be written.
        }
      }
      return entry;
    },

    async set(key: string, target: string, entry: CacheEntry): Promise<void> {
      if (c.closed) throw new StoreUnavailableError('SQLite store is closed');
      const size = Buffer.byteLength(entry.value) + Buffer.byteLength(key) + Buffer.byteLength(target);
      const stored = { value: entry.value, storedAt: Math.trunc(entry.storedAt) };
      keepHot(key, target, stored, size);
      // Written with the others of the next few milliseconds in one transaction.
      const previous = pendingWrites.get(key);
      if (previous) pendingBytes -= previous.size;
      pendingWrites.set(key, { target, entry: stored, size });
      pendingBytes += size;
      if (pendingBytes >= MAX_PENDING_BYTES) flushWrites();
      else if (!writeTimer) {
        writeTimer = setTimeout(() => {
          try {
            flushWrites();
          } catch {
            // A cache write lost to an unreachable store costs one scrape later; nothing more.
          }
        }, WRITE_DELAY_MS);
        writeTimer.unref();
      }
    },

    async deleteTarget(target: string): Promise<void> {
      for (const [key, write] of pendingWrites) {
        if (write.target !== target) continue;
        pendingWrites.delete(key);
        pendingBytes -= write.size;
      }
      c.run(() => st.cacheDeleteTarget.run(target));
      for (const [key, held] of hot) if (held.target === target) dropHot(key);
    },

    async prune(now: number): Promise<void> {
      flushWrites();
      flush();
      // Off the event loop where there is a background thread; in short batches either way.
      const dropped = await background.prune({ now, maxAgeMs, maxBytes, evictTo: EVICT_TO });
      // Whatever the table dropped must not be served from memory either.
      if (dropped > 0) {
        hot.clear();
        hotBytes = 0;
      }
    },
  };
}

// ---- background work ---------------------------------------------------------------------

/** How often the background thread checkpoints the write-ahead log. */
const CHECKPOINT_INTERVAL_MS = 100;
/** Commits between two looks at the log's size from this thread, and the least time between two calls for a round. */
const COMMITS_PER_WAL_CHECK = 32;
const CHECKPOINT_CALL_GAP_MS = 20;

/** Store work that can take long (see sqlite-maintenance.ts). */
interface Background {
  prune(options: PruneOptions): Promise<number>;
  stop(): Promise<void>;
}

/** Turns an error a worker thread reported back into what the store throws. */
function fromWorker(error: { message: string; code?: unknown; errcode?: unknown }): unknown {
  return toStoreError(Object.assign(new Error(error.message), { code: error.code, errcode: error.errcode }));
}

/** For an in-memory database (one connection only) or when the thread is gone: the work runs here. */
function inPlace(c: Connection): Background {
  return {
    prune: async (options) => {
      if (c.closed) throw new StoreUnavailableError('SQLite store is closed');
      try {
        return await pruneCache(c.db, options, () => yieldToEvents());
      } catch (err) {
        throw toStoreError(err);
      }
    },
    stop: async () => {},
  };
}

/**
 * A worker thread with a connection of its own that checkpoints the log and keeps it bounded,
 * and prunes the cache when asked: no request of this thread waits on a copy of the log, an
 * fsync, or a large delete.
 */
function startBackground(c: Connection, path: string, busyTimeoutMs: number, walMaxBytes: number): Background {
  const worker = new Worker(new URL('./sqlite-worker.ts', import.meta.url), {
    workerData: { path, busyTimeoutMs, intervalMs: CHECKPOINT_INTERVAL_MS, walMaxBytes } satisfies WorkerData,
    execArgv: ['--disable-warning=ExperimentalWarning'],
  });
  worker.unref();
  // This connection no longer checkpoints on commit; should it restart the log itself (when
  // nothing else is using it), the file is cut back to the limit.
  c.db.exec('PRAGMA wal_autocheckpoint = 0');
  c.db.exec(`PRAGMA journal_size_limit = ${Math.trunc(walMaxBytes)}`);

  const fallback = inPlace(c);
  let failed = false;
  // Writes faster than the thread's pace would overrun the limit between two of its rounds:
  // the size is looked at every few commits, and a log over the limit calls a round at once.
  let commits = 0;
  let calledAt = 0;
  c.afterCommit = () => {
    commits += 1;
    if (failed || stopping || commits % COMMITS_PER_WAL_CHECK !== 0 || walBytes(path) <= walMaxBytes) return;
    const now = Date.now();
    if (now - calledAt < CHECKPOINT_CALL_GAP_MS) return;
    calledAt = now;
    worker.postMessage({ type: 'checkpoint' } satisfies WorkerRequest);
  };
  let stopping = false;
  let stopped: (() => void) | null = null;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (dropped: number) => void; reject: (err: unknown) => void }>();
  const settle = (id: number) => {
    const pending = waiting.get(id);
    waiting.delete(id);
    // The thread keeps the process alive only while an answer is awaited.
    if (waiting.size === 0) worker.unref();
    return pending;
  };
  worker.on('message', (reply: WorkerReply) => {
    if (reply.type === 'stopped') stopped?.();
    else if (reply.type === 'pruned') settle(reply.id)?.resolve(reply.dropped);
    else settle(reply.id)?.reject(stopping ? new StoreUnavailableError('SQLite store is closed') : fromWorker(reply.error));
  });
  const lost = () => {
    if (stopping || failed) return;
    failed = true;
    // Without the thread, commits checkpoint again as SQLite does by default, and the cache
    // is pruned on this thread (still in short batches).
    if (!c.closed) c.db.exec('PRAGMA wal_autocheckpoint = 1000');
    for (const id of [...waiting.keys()]) settle(id)?.reject(new StoreUnavailableError('the SQLite background thread stopped'));
  };
  worker.on('error', lost);
  worker.on('exit', lost);

  return {
    prune: (options) => {
      if (failed) return fallback.prune(options);
      if (c.closed || stopping) return Promise.reject(new StoreUnavailableError('SQLite store is closed'));
      const id = nextId++;
      return new Promise<number>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ type: 'prune', id, options } satisfies WorkerRequest);
      });
    },
    stop: async () => {
      if (failed) return;
      stopping = true;
      await new Promise<void>((resolve) => {
        const timeout = setTimeout(() => void worker.terminate().then(() => resolve()), 2_000);
        const done = () => {
          clearTimeout(timeout);
          resolve();
        };
        stopped = done;
        worker.once('exit', done);
        worker.ref();
        worker.postMessage({ type: 'stop' } satisfies WorkerRequest);
      });
    },
  };
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
function prepareFile(path: string, create: boolean): void {
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

// ---- entry point -------------------------------------------------------------------------

export function openSqliteStores(options: SqliteStoreOptions): Stores {
  const maxBytes = options.cacheMaxBytes ?? GIB;
  const maxAgeMs = options.cacheMaxAgeMs ?? 30 * DAY_MS;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  const flushMs = options.cacheTouchFlushMs ?? 5_000;
  if (!(maxBytes > 0)) throw new RangeError(`cacheMaxBytes must be positive, got ${maxBytes}`);
  if (!(maxAgeMs > 0)) throw new RangeError(`cacheMaxAgeMs must be positive, got ${maxAgeMs}`);

  const walMaxBytes = options.walMaxBytes ?? WAL_MAX_BYTES;
  if (!(walMaxBytes > 0)) throw new RangeError(`walMaxBytes must be positive, got ${walMaxBytes}`);

  const create = options.create ?? true;
  if (options.path !== ':memory:') prepareFile(options.path, create);
  const c = new Connection(options.path, busyTimeoutMs, { create, maxDatabaseBytes: options.maxDatabaseBytes });
  const background = options.path === ':memory:' ? inPlace(c) : startBackground(c, options.path, busyTimeoutMs, walMaxBytes);
  const cache = cacheStore(c, background, maxBytes, maxAgeMs);
  const timer = setInterval(() => {
    try {
      cache.flush();
    } catch {
      // Retried at the next tick, the next prune or close.
    }
  }, flushMs);
  timer.unref();

  return {
    accounts: accountStore(c),
    ledger: ledger(c),
    cache: {
      get: (key) => cache.get(key),
      set: (key, target, entry) => cache.set(key, target, entry),
      deleteTarget: (target) => cache.deleteTarget(target),
      prune: (now) => cache.prune(now),
    },
    limiter: new InProcessRateLimiter(),

    async ping(): Promise<void> {
      c.run(() => c.st.ping.get());
    },

    async probeWrite(): Promise<void> {
      c.probeWrite();
    },

    async close(): Promise<void> {
      if (c.closed) return;
      clearInterval(timer);
      await background.stop();
      try {
        cache.flush();
      } catch {
        // Access times are a hint; losing the last few seconds of them is harmless.
      }
      c.closed = true;
      try {
        c.db.close();
      } catch (err) {
        throw toStoreError(err);
      }
    },
  };
}
