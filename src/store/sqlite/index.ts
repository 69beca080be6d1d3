// The embedded default: every store in one SQLite file through `node:sqlite`.
//
// The service and the operator CLI may have the same file open from different processes,
// so: WAL (readers never block the writer), a busy timeout, and every multi-statement write
// in a `BEGIN IMMEDIATE` transaction (takes the write lock up front, so two writers never
// deadlock or fail on a stale snapshot). `node:sqlite` is synchronous: a transaction never
// spans an `await`, so calls from the same process cannot interleave inside one either.
//
// One file per concern: schema.ts, connection.ts, accounts.ts, ledger.ts, cache.ts, idempotency.ts,
// checkpointer.ts (with worker.ts and maintenance.ts).
import { InProcessRateLimiter } from '../memory-limiter.ts';
import { databaseState, type Stores } from '../types.ts';
import { accountStore } from './accounts.ts';
import { cacheStore } from './cache.ts';
import { inPlace, startBackground } from './checkpointer.ts';
import { Connection, prepareFile, toStoreError } from './connection.ts';
import { ledger } from './ledger.ts';
import { requestLog } from './requests.ts';
import { userStore } from './users.ts';
import { driftLog } from './drift.ts';
import { idempotencyStore } from './idempotency.ts';
import { eventLog } from './events.ts';
import { webhookStore } from './webhooks.ts';
import { monitorStore } from './monitors.ts';
import { jobStore } from './jobs.ts';

export { sqliteFiles } from './connection.ts';

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

  const stores: Stores = {
    accounts: accountStore(c),
    users: userStore(c),
    drift: driftLog(c),
    idempotency: idempotencyStore(c),
    events: eventLog(c),
    webhooks: webhookStore(c),
    monitors: monitorStore(c),
    jobs: jobStore(c),
    ledger: ledger(c),
    cache: {
      get: (key) => cache.get(key),
      set: (key, target, entry) => cache.set(key, target, entry),
      deleteTarget: (target) => cache.deleteTarget(target),
      prune: (now) => cache.prune(now),
    },
    requests: requestLog(c, background.records),
    limiter: new InProcessRateLimiter(),

    async ping(): Promise<void> {
      c.ping();
    },

    async probeWrite(): Promise<void> {
      c.probeWrite();
    },

    async backends() {
      return { sqlite: await databaseState(stores) };
    },

    async close(): Promise<void> {
      if (c.closed) return;
      clearInterval(timer);
      await background.stop();
      c.commitGroup();
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
  return stores;
}
