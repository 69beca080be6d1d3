// The stores the configuration names: the embedded default (SQLite in DATA_DIR), or
// PostgreSQL (DATABASE_URL) for accounts, credits and the cache, with Redis (REDIS_URL) for
// what nodes share in memory. Running more than one node needs both.
//
// DATA_DIR/service.db holds every team, key, credit and ledger entry, so it is never replaced
// by a new, empty database without a word. A directory the service has used before (it holds
// the `initialised` marker written once the database had its schema, a -wal or -shm file of
// the database, or the demo's key, not the cluster's) must hold its database; a missing, emptied or schema-less
// service.db there stops the start with a message naming the file, and only
// `npm run -s admin -- init` starts over on purpose. A directory never used before is
// initialised automatically, so that a fresh clone's demo and a new deployment just start.
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Config } from '../config.ts';
import { describeFsError } from '../fs-errors.ts';
import { openSqliteStores, sqliteFiles } from './sqlite/index.ts';
import { MissingDatabaseError, type Stores } from './types.ts';

export const DATABASE_FILE = 'service.db';
/** Written once the database has its schema: from then on the directory counts as used. */
export const MARKER_FILE = 'initialised';
/** The command that creates a new, empty database on purpose. */
export const INIT_COMMAND = 'npm run -s admin -- init';

/**
 * The demo key that `npm run demo` and `npm run cluster` write: the file the README's curl lines
 * read. The cluster keeps its own copy in `cluster/` too.
 */
export const DEMO_KEY_FILE = 'demo-key';
export const CLUSTER_DEMO_KEY_FILE = join('cluster', DEMO_KEY_FILE);
/** Files of the data directory besides the database's own, kept private like it. */
const PRIVATE_FILES = [MARKER_FILE, 'cursor-secret', DEMO_KEY_FILE];

/** The directory's demo key is the cluster's (from PostgreSQL), which says nothing of the database here. */
function isClusterDemoKey(dataDir: string): boolean {
  try {
    return readFileSync(join(dataDir, DEMO_KEY_FILE), 'utf8') === readFileSync(join(dataDir, CLUSTER_DEMO_KEY_FILE), 'utf8');
  } catch {
    return false;
  }
}

export const databasePath = (config: Pick<Config, 'dataDir'>): string => join(config.dataDir, DATABASE_FILE);

/** The names of the files that show the service has used this directory before; none when it never has. */
export function signsOfUse(dataDir: string): string[] {
  const [, wal, shm] = sqliteFiles(join(dataDir, DATABASE_FILE));
  const signs = [MARKER_FILE, basename(wal as string), basename(shm as string), DEMO_KEY_FILE].filter((name) => existsSync(join(dataDir, name)));
  return signs.filter((name) => name !== DEMO_KEY_FILE || !isClusterDemoKey(dataDir));
}

function refusal(error: MissingDatabaseError, dataDir: string, signs: string[]): Error {
  return new Error(
    [
      `${error.message}, but DATA_DIR ${dataDir} has been used before (it holds ${signs.join(', ')}).`,
      'Refusing to start with a new, empty database, which would lose every team, key, credit and ledger entry.',
      `Restore ${DATABASE_FILE} (with its -wal file, if any) from a backup, or set DATA_DIR to the directory that holds it.`,
      `To start over with an empty database on purpose, run with the same DATA_DIR: ${INIT_COMMAND}`,
    ].join('\n'),
    { cause: error },
  );
}

/** Marks the directory as used and makes its files private (earlier versions left some 0644). */
function settle(dataDir: string): void {
  const marker = join(dataDir, MARKER_FILE);
  try {
    if (!existsSync(marker)) {
      writeFileSync(
        marker,
        `${DATABASE_FILE} in this directory was initialised on ${new Date().toISOString()}.\n` +
          `While this file exists, the service refuses to start without ${DATABASE_FILE}; ${INIT_COMMAND} starts over on purpose.\n`,
        { mode: 0o600 },
      );
    }
  } catch (error) {
    throw describeFsError(error, `cannot write ${marker}`);
  }
  for (const name of PRIVATE_FILES) {
    try {
      chmodSync(join(dataDir, name), 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw describeFsError(error, `cannot make ${join(dataDir, name)} private`);
    }
  }
}

function openDatabase(config: Pick<Config, 'dataDir' | 'cacheMaxBytes'>, create: boolean): Stores {
  const stores = openSqliteStores({ path: databasePath(config), cacheMaxBytes: config.cacheMaxBytes, create });
  try {
    settle(config.dataDir);
  } catch (error) {
    void stores.close();
    throw error;
  }
  return stores;
}

/** Opens the embedded store; refuses a used data directory whose database is gone. */
function openEmbedded(config: Pick<Config, 'dataDir' | 'cacheMaxBytes'>): Stores {
  const signs = signsOfUse(config.dataDir);
  try {
    return openDatabase(config, signs.length === 0);
  } catch (error) {
    if (error instanceof MissingDatabaseError) throw refusal(error, config.dataDir, signs);
    throw error;
  }
}

type BackendConfig = Pick<Config, 'dataDir' | 'cacheMaxBytes' | 'databaseUrl' | 'redisUrl' | 'redisPrefix' | 'redisCacheMaxBytes' | 'migrateOnStart'> &
  Partial<Pick<Config, 'jobs' | 'requestBudgetMs' | 'reservationMarginMs'>>;

/** How long a node may go silent before its job items are taken up: JOB_LOCK_MS, or the request budget and the reservation margin (as the runner's claims). */
const jobLockMs = (config: BackendConfig): number | undefined =>
  config.jobs?.lockMs ?? (config.requestBudgetMs !== undefined && config.reservationMarginMs !== undefined ? config.requestBudgetMs + config.reservationMarginMs : undefined);

/**
 * Opens the configured stores. On PostgreSQL, refuses a database whose schema is not this
 * program's (SchemaMismatchError names the command that fixes it) unless MIGRATE=auto.
 */
export async function openStores(config: BackendConfig): Promise<Stores> {
  // PostgreSQL and Redis (with pg and ioredis) are imported only when configured: the embedded
  // service does not hold their modules (about 4 MB resident at rest, npm run bench:idle-memory).
  const stores = config.databaseUrl
    ? await (await import('./postgres/index.ts')).openPostgresStores({ url: config.databaseUrl, cacheMaxBytes: config.cacheMaxBytes, schema: config.migrateOnStart ? 'migrate' : 'check', jobLockMs: jobLockMs(config) })
    : openEmbedded(config);
  if (!config.redisUrl) return stores;
  const { withRedis } = await import('./redis/index.ts');
  return withRedis(stores, { url: config.redisUrl, prefix: config.redisPrefix, cacheMaxBytes: config.redisCacheMaxBytes });
}

/** `admin migrate`: brings the PostgreSQL database to this program's schema. */
export async function migrateStores(config: Pick<Config, 'databaseUrl'>, tell?: (line: string) => void): Promise<{ applied: number[] }> {
  if (!config.databaseUrl) {
    throw new Error('migrate applies to PostgreSQL: set DATABASE_URL. The embedded SQLite store migrates itself when it opens.');
  }
  const { migrateDatabase } = await import('./postgres/index.ts');
  return { applied: await migrateDatabase({ url: config.databaseUrl }, tell) };
}

export interface Initialised {
  database: string;
  /** Where a -wal file left by a lost database was moved (kept, not deleted); null when none. */
  orphanedWal: string | null;
}

/**
 * Creates a new, empty database on purpose (`admin init`). Never replaces one that holds the
 * schema; a missing, empty or schema-less one is initialised, and a -wal file it left behind is
 * moved aside first, since SQLite would otherwise replay its pages into the new database.
 */
export async function initialiseDatabase(config: Config): Promise<Initialised> {
  const path = databasePath(config);
  try {
    const existing = openSqliteStores({ path, create: false });
    await existing.close();
  } catch (error) {
    if (!(error instanceof MissingDatabaseError)) throw error;
    const [, wal, shm] = sqliteFiles(path) as [string, string, string];
    let orphanedWal: string | null = null;
    try {
      if (existsSync(wal) && statSync(wal).size > 0) {
        orphanedWal = `${wal}.orphaned-${new Date().toISOString().replaceAll(':', '-')}`;
        renameSync(wal, orphanedWal);
      }
      rmSync(wal, { force: true });
      rmSync(shm, { force: true });
    } catch (fsError) {
      throw describeFsError(fsError, `cannot move aside the files ${DATABASE_FILE} left in ${config.dataDir}`);
    }
    await openDatabase(config, true).close();
    return { database: path, orphanedWal };
  }
  throw new Error(`${path} already holds a database; init never replaces one. Move it away first to start over with an empty one.`);
}
