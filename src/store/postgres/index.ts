// The scale-out store for accounts, keys, credits and the cache: PostgreSQL, shared by every
// node. One file per concern: pool.ts, schema.ts, accounts.ts, ledger.ts, cache.ts.
import { InProcessRateLimiter } from '../memory-limiter.ts';
import { databaseState, type Stores } from '../types.ts';
import { accountStore, type PostgresAccountStore, type TeamWatcher } from './accounts.ts';
import { cacheStore, type DurableCache } from './cache.ts';
import { ledger } from './ledger.ts';
import { requestLog } from './requests.ts';
import { userStore } from './users.ts';
import { driftLog } from './drift.ts';
import { idempotencyStore } from './idempotency.ts';
import { eventLog } from './events.ts';
import { webhookStore } from './webhooks.ts';
import { monitorStore } from './monitors.ts';
import { jobStore } from './jobs.ts';
import { BackendMonitor } from '../monitor.ts';
import { createPool, database, probeOf, type PostgresOptions } from './pool.ts';
import { checkSchema, migrate } from './schema.ts';
import { itemQueue, migrateQueue } from './queue.ts';

export { MIGRATE_COMMAND, SchemaMismatchError, SCHEMA_VERSION } from './schema.ts';
export type { FoundKey, PostgresAccountStore, TeamWatcher } from './accounts.ts';

/** The PostgreSQL stores, with what a cluster's Redis layer keeps copies of (redis/gate.ts). */
export interface PostgresStores extends Stores {
  accounts: PostgresAccountStore;
  cache: DurableCache;
  /** Entries scraped longer ago than this are dropped from the cache. */
  cacheMaxAgeMs: number;
  /**
   * Tells `watcher` of every change committed to a team's keys or credits from now on, and
   * lists `prefix` as one under which nodes keep copies (until the database is dropped).
   */
  watchTeams(watcher: TeamWatcher, prefix: string): Promise<void>;
}

export interface PostgresStoreOptions extends PostgresOptions {
  /** Bound on the cache's total size (value, key and target bytes); default 1 GiB. */
  cacheMaxBytes?: number;
  /** Cache entries scraped longer ago than this are dropped by `prune`; default 30 days. */
  cacheMaxAgeMs?: number;
  /**
   * `check` (the default): refuse a database that is not at this program's schema version;
   * `migrate`: bring it there first (MIGRATE=auto).
   */
  schema?: 'check' | 'migrate';
  /** How long a node may go silent before its job items are taken up by others (JOB_LOCK_MS); default 75 s. */
  jobLockMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Opens the PostgreSQL stores; the limiter is in-process until a Redis one replaces it. */
export async function openPostgresStores(options: PostgresStoreOptions): Promise<PostgresStores> {
  const pool = createPool(options);
  let closed = false;
  const health = probeOf(options.url);
  const monitor = new BackendMonitor('PostgreSQL', health.probe);
  const db = database(pool, () => closed, monitor);
  const { query } = db;
  try {
    if (options.schema === 'migrate') {
      await migrate(pool);
      await migrateQueue(pool);
    } else await checkSchema(pool);
  } catch (err) {
    monitor.stop();
    await health.close();
    await pool.end().catch(() => {});
    throw err;
  }
  const cacheMaxAgeMs = options.cacheMaxAgeMs ?? 30 * DAY_MS;
  const cache = cacheStore(query, options.cacheMaxBytes ?? 1024 ** 3, cacheMaxAgeMs);
  let watcher: TeamWatcher | undefined;
  const queue = itemQueue({ pool, migrate: false, lockMs: options.jobLockMs ?? 75_000 });
  const stores: PostgresStores = {
    accounts: accountStore(db, () => watcher),
    users: userStore(query),
    drift: driftLog(query),
    idempotency: idempotencyStore(query),
    events: eventLog(query),
    webhooks: webhookStore(db),
    monitors: monitorStore(db),
    jobs: jobStore(db, queue),
    ledger: ledger(query, () => watcher),
    cache,
    cacheMaxAgeMs,
    requests: requestLog(query),
    limiter: new InProcessRateLimiter(),
    async ping(): Promise<void> {
      await query('SELECT 1');
    },
    async probeWrite(): Promise<void> {
      // A committed write that leaves nothing behind (one row per connection, so probes never wait on each other).
      await db.transaction(async (client) => {
        await client.query('INSERT INTO write_probe (id) VALUES (pg_backend_pid())');
        await client.query('DELETE FROM write_probe WHERE id = pg_backend_pid()');
      });
    },
    async backends() {
      return { postgres: await databaseState(stores) };
    },
    roundTrips: () => ({ postgres: db.roundTrips() }),
    async watchTeams(w, prefix) {
      await query('INSERT INTO redis_copies (prefix) VALUES ($1) ON CONFLICT DO NOTHING', [prefix]);
      watcher = w;
    },
    async close(): Promise<void> {
      if (closed) return;
      await cache.flush().catch(() => {});
      await queue.stop().catch(() => {});
      closed = true;
      monitor.stop();
      await health.close();
      await pool.end();
    },
  };
  return stores;
}

/** `admin migrate`: applies the missing migrations, telling `tell` of each step; returns the versions applied. */
export async function migrateDatabase(options: PostgresOptions, tell?: (line: string) => void): Promise<number[]> {
  const pool = createPool(options);
  try {
    const applied = await migrate(pool, tell);
    await migrateQueue(pool, tell);
    return applied;
  } finally {
    await pool.end();
  }
}
