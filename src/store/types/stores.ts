// The set of stores a service runs on (SQLite alone, or PostgreSQL and Redis), its health, and
// the errors a store throws.
import type { PaceLimits, Pacer } from '../../upstream/pacing.ts';
import type { AccountStore } from './accounts.ts';
import type { Ledger } from './ledger.ts';
import type { CacheStore } from './cache.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { UserStore } from './users.ts';
import type { Gate } from './gate.ts';
import type { RequestLog } from './requests.ts';
import type { DriftLog } from './drift.ts';
import type { Flights, KeyValue } from './shared-state.ts';
import type { EventLog } from './events.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { WebhookStore } from './webhooks.ts';
import type { MonitorStore } from './monitors.ts';
import type { JobStore } from './jobs.ts';

export interface Stores {
  accounts: AccountStore;
  users: UserStore;
  ledger: Ledger;
  cache: CacheStore;
  requests: RequestLog;
  drift: DriftLog;
  idempotency: IdempotencyStore;
  events: EventLog;
  webhooks: WebhookStore;
  monitors: MonitorStore;
  jobs: JobStore;
  limiter: RateLimiter;
  /**
   * Admits in fewer round trips than a key lookup followed by a limiter call (a cluster: keys a
   * node has seen, checked by the limiter's own Redis call); absent: `lookupGate`.
   */
  gate?: Gate;
  /** Shares identical scrapes across nodes; absent on a single node (they are shared in-process). */
  flights?: Flights;
  /**
   * The platforms' pace and concurrency caps held across nodes (Redis); absent on a single node
   * (each paces itself, upstream/pacing.ts).
   */
  pacer?(limits: (platform: string) => PaceLimits, queueMax: number): Pacer;
  /** The platforms' shared state across nodes; absent on a single node (kept in-process). */
  kv?: KeyValue;
  /** Cheap reachability check (a read). */
  ping(): Promise<void>;
  /**
   * Readiness check for `/readyz`: commits a small write that needs fresh storage (a full disk,
   * a read-only file or a held write lock make it fail as live scrapes would), and leaves no
   * data behind. Rejects with StoreUnavailableError when the store cannot write now.
   */
  probeWrite(): Promise<void>;
  /**
   * Each backend by name (`sqlite`; or `postgres` and `redis`) and whether it serves now:
   * reads and writes for a database, a command for Redis. Never rejects.
   */
  backends(): Promise<Record<string, BackendState>>;
  /** Round trips made to each networked backend so far (none for the embedded store). */
  roundTrips?(): Record<string, number>;
  close(): Promise<void>;
}

export type BackendState = 'up' | 'down';

/** Up when the database answers a read and commits a write. */
export async function databaseState(stores: Pick<Stores, 'ping' | 'probeWrite'>): Promise<BackendState> {
  try {
    await stores.ping();
    await stores.probeWrite();
    return 'up';
  } catch {
    return 'down';
  }
}

/** Thrown by a store whose backend cannot be reached; answered with 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Thrown when opening a store that must already hold the service's data (teams, keys, credits,
 * ledger) finds none: the file is missing or empty, or holds no schema. Starting over with an
 * empty database would lose that data silently, so it is only done on purpose.
 */
export class MissingDatabaseError extends Error {
  readonly location: string;
  readonly problem: 'missing' | 'empty' | 'no-schema';

  constructor(location: string, problem: 'missing' | 'empty' | 'no-schema') {
    const what = { missing: 'is missing', empty: 'is empty (0 bytes)', 'no-schema': "holds none of the service's tables" }[problem];
    super(`The database ${location} ${what}`);
    this.name = 'MissingDatabaseError';
    this.location = location;
    this.problem = problem;
  }
}
