// PostgreSQL and Redis for tests: the machine's servers (127.0.0.1:5432, user postgres, trust;
// 127.0.0.1:6379), or TEST_DATABASE_URL / TEST_REDIS_URL. Each test file gets a database of its
// own, each store opened in it a schema of its own, and each a Redis key prefix of its own; all
// are dropped afterwards. A server that is absent fails the test: nothing is skipped.
// TEST_DATABASE_PREFIX and TEST_REDIS_PREFIX name them otherwise (defaults `pagescrape_test_` and
// `test:`), for a machine whose servers other users share under names of their own.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const token = (): string => randomBytes(6).toString('hex');
const DATABASE_PREFIX = process.env.TEST_DATABASE_PREFIX ?? 'pagescrape_test_';
const REDIS_PREFIX = process.env.TEST_REDIS_PREFIX ?? 'test:';

export interface TestBackends {
  /** A URL of an empty schema in this file's database (`?options=-c search_path=…`). */
  freshDatabaseUrl(): Promise<string>;
  /** A Redis key prefix no other test uses. */
  freshPrefix(): string;
  redisUrl: string;
  /** Drops the database and deletes every key under the prefixes handed out. */
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`PostgreSQL is needed by this test and is not reachable at ${ADMIN_DATABASE_URL}: ${(error as Error).message}`, { cause: error });
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function testBackends(): Promise<TestBackends> {
  const database = `${DATABASE_PREFIX}${token()}`;
  await adminQuery(`CREATE DATABASE ${database}`);
  const base = new URL(ADMIN_DATABASE_URL);
  base.pathname = `/${database}`;
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
  } catch (error) {
    throw new Error(`Redis is needed by this test and is not reachable at ${TEST_REDIS_URL}: ${(error as Error).message}`, { cause: error });
  }
  const prefixes: string[] = [];
  let schemas = 0;
  return {
    redisUrl: TEST_REDIS_URL,
    async freshDatabaseUrl() {
      const schema = `s${++schemas}`;
      const client = new pg.Client({ connectionString: base.href });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA ${schema}`);
      } finally {
        await client.end();
      }
      const url = new URL(base.href);
      url.searchParams.set('options', `-c search_path=${schema}`);
      return url.href;
    },
    freshPrefix() {
      const prefix = `${REDIS_PREFIX}${token()}:`;
      prefixes.push(prefix);
      return prefix;
    },
    async drop() {
      for (const prefix of prefixes) {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
      redis.disconnect();
      await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}
