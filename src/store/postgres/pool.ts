// The connection pool to PostgreSQL, and the driver errors that mean "the database cannot be
// used right now" (answered 503), as opposed to a mistake in the SQL or the data.
import pg from 'pg';
import type { BackendMonitor } from '../monitor.ts';
import { publishRoundTrip } from '../round-trips.ts';
import { StoreUnavailableError } from '../types.ts';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq's URL form; `?options=-c search_path=…` works). */
  url: string;
  /** Connections per node; default 10. */
  maxConnections?: number;
  /**
   * Bound on waiting for a connection (a busy node queues for one) and on every statement;
   * default 5 s. A database that stops answering is found by the health probe within about
   * two seconds, and calls then fail at once (monitor.ts).
   */
  timeoutMs?: number;
}

// int8 (counts, sums, ledger ids) as JavaScript numbers: every value the service stores is far
// below 2^53 (credits are checked to be safe integers before they reach the database).
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function createPool(options: PostgresOptions): pg.Pool {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: timeoutMs,
    // Enforced by the client, so that a database that stopped answering (a network partition,
    // a stopped process) cannot hold a request either.
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'pagescrape',
    types,
  });
  // An idle connection that breaks (the server restarted) is dropped by the pool; the next
  // query opens a new one. Without a listener the error would end the process.
  pool.on('error', () => {});
  return pool;
}

// SQLSTATE classes and codes that mean the database is unavailable now, not that the request
// was wrong: connection exceptions (08), insufficient resources (53), operator intervention
// (57: shutdown, query cancelled by the statement timeout), system errors (58).
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = /timeout|Connection terminated|Client has encountered a connection error|Cannot use a pool after calling end/i;

export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !(err instanceof Error)) return err;
  const e = err as Error & { code?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if ((code.length === 5 && UNAVAILABLE_CLASSES.has(code.slice(0, 2))) || UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_MESSAGES.test(e.message)) {
    return new StoreUnavailableError(`PostgreSQL unavailable: ${e.message}`, { cause: err });
  }
  return err;
}

/** The pool's query, with unavailability turned into StoreUnavailableError. */
export type Query = <R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

export interface Db {
  query: Query;
  /** Statements sent so far (each a round trip), for the backend metrics. */
  roundTrips(): number;
  /**
   * Runs `fn` in one transaction on one connection of the pool. `opening`: statements without
   * parameters run with BEGIN in the same round trip (a transaction lock taken first).
   */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, opening?: string): Promise<T>;
}

/** A health probe on a connection of its own (not the pool's, where a busy node's queries wait). */
export function probeOf(url: string): { probe: () => Promise<void>; close: () => Promise<void> } {
  let client: pg.Client | null = null;
  return {
    async probe() {
      try {
        if (!client) {
          const fresh = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000, query_timeout: 1_000, application_name: 'pagescrape-probe' });
          fresh.on('error', () => {});
          client = fresh;
          await fresh.connect();
        }
        await client.query('SELECT 1');
      } catch (error) {
        const broken = client;
        client = null;
        await broken?.end().catch(() => {});
        throw error;
      }
    },
    async close() {
      await client?.end().catch(() => {});
      client = null;
    },
  };
}

/**
 * The pool as the stores use it: every call fails with StoreUnavailableError once `isClosed()`,
 * or at once while the monitor finds the database down.
 */
export function database(pool: pg.Pool, isClosed: () => boolean, monitor: BackendMonitor): Db {
  const open = () => {
    if (isClosed()) throw new StoreUnavailableError('PostgreSQL store is closed');
    monitor.assertUp();
  };
  const counted = { n: 0 };
  return {
    roundTrips: () => counted.n,
    async query(text, values) {
      open();
      counted.n++;
      publishRoundTrip('postgres');
      try {
        return await pool.query(text, values);
      } catch (err) {
        throw toStoreError(err);
      }
    },
    transaction: (fn, opening) => runTransaction(pool, open, fn, counted, opening),
  };
}

async function runTransaction<T>(pool: pg.Pool, open: () => void, fn: (client: pg.PoolClient) => Promise<T>, counted: { n: number }, opening?: string): Promise<T> {
  open();
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toStoreError(err);
  }
  // Every statement of the transaction is a round trip.
  const query = client.query.bind(client);
  client.query = ((...args: Parameters<typeof query>) => {
    counted.n++;
    publishRoundTrip('postgres');
    return query(...args);
  }) as typeof client.query;
  let broken: Error | undefined;
  try {
    // One simple query (no parameters) may hold several statements: one round trip for both.
    await client.query(opening ? `BEGIN; ${opening}` : 'BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      // The connection is unusable: the pool must not hand it out again.
      broken = rollbackError as Error;
    });
    throw toStoreError(err);
  } finally {
    client.query = query;
    client.release(broken);
  }
}
