// The delivery of batch job items on PostgreSQL: pg-boss, in a schema of its own (queueSchema) of
// the same database, over the stores' pool. `job_items` stays the record of every item (its
// status, pages, credits, attempts); each item waiting to run has one pg-boss job carrying
// `{ job, idx }`, inserted in the transaction that queues the item (a job's creation, a retry, a
// transient failure's back-off, a shutdown's give-back) and completed once the item has ended.
//
// pg-boss decides who runs what: a fetch takes the oldest carrier whose team (its group) runs
// fewer than JOB_CONCURRENCY_PER_TEAM items across every node, and a carrier whose node stopped
// heartbeating is failed back to the queue by the supervisor of any live node and fetched again.
// Carriers are fetched by priority first: an item's priority is minus the number of its team's
// items waiting ahead of it, so teams take turns rather than wait behind an older team's job.
import type { PgBoss, Db as IDatabase, Job } from 'pg-boss';
import type pg from 'pg';

/**
 * The schema pg-boss owns: `job_queue`, or `<schema>_job_queue` when DATABASE_URL puts the
 * service's tables in a schema of their own (search_path), so that two services sharing a
 * database never take each other's items.
 */
export async function queueSchema(pool: pg.Pool): Promise<string> {
  const current = (await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema')).rows[0]?.schema ?? 'public';
  return current === 'public' ? 'job_queue' : `${current}_job_queue`;
}
const QUEUE = 'job-items';
/** pg-boss's own bounds: a heartbeat of at least 10 s, an active job for at most 24 h. */
const MIN_HEARTBEAT_S = 10;
const MAX_RUN_S = 24 * 60 * 60 - 60;
/** Carriers of a dead node go back to the queue again and again, as the item would have before. */
const RETRY_LIMIT = 1_000_000;
/** How long the carriers of ended items wait for a claim to complete them, at most. */
const COMPLETE_AFTER_MS = 50;

export interface Carried {
  job: string;
  idx: number;
}

export interface Carrier {
  jobId: string;
  index: number;
  teamId: string;
  /** How many of the team's items wait ahead of this one. */
  ahead: number;
  /** Epoch ms before which it is not fetched; null: at once. */
  startAfter: number | null;
}

/** pg-boss's statements run by our pool, or by `client` in its transaction. */
const over = (runner: pg.Pool | pg.PoolClient): IDatabase => ({ executeSql: async (text: string, values?: unknown[]) => runner.query(text, values) });
const inTransaction = (client: pg.PoolClient): IDatabase => over(client);

export interface ItemQueue {
  /** Queues the carriers in `client`'s transaction. */
  send(client: pg.PoolClient, carriers: readonly Carrier[]): Promise<void>;
  /** The next carriers (at most `max`) whose team runs fewer than `perTeam` items, marked active in `client`'s transaction. */
  fetch(client: pg.PoolClient, perTeam: number, max: number): Promise<Job<Carried>[]>;
  /** Tells pg-boss the carrier's node is alive. */
  touch(id: string): Promise<void>;
  /** Completes the carriers (in `client`'s transaction when given). */
  complete(ids: readonly string[], client?: pg.PoolClient): Promise<void>;
  /**
   * Completes the carriers of items that have ended with others: with the next claim (`takeEnded`)
   * or, when none comes, within COMPLETE_AFTER_MS: one statement for many items. One lost (the
   * node dies first) comes back to an ended item, which runs nothing.
   */
  completeSoon(ids: readonly string[]): void;
  /** The carriers given to `completeSoon` not yet completed, for the caller to complete (or give back to `completeSoon`). */
  takeEnded(): string[];
  /**
   * Where pg-boss's own errors go (its supervisor's and maintenance's, which no call of ours
   * awaits): to `report`, the latest given; to none before one is given.
   */
  onError(report: (error: Error) => void): void;
  /** Deletes the carriers not yet fetched of a job (cancelled), in `client`'s transaction. */
  dropQueued(client: pg.PoolClient, jobId: string): Promise<void>;
  stop(): Promise<void>;
}

export interface QueueOptions {
  pool: pg.Pool;
  /** Install or upgrade pg-boss's schema (MIGRATE=auto, `admin migrate`); otherwise only check it. */
  migrate: boolean;
  /** How long a node may go without a heartbeat before its items are taken up (JOB_LOCK_MS). */
  lockMs: number;
}

/** Starts pg-boss on first use, so that a process that never touches a job never starts it. */
export function itemQueue(options: QueueOptions): ItemQueue {
  let started: Promise<PgBoss> | null = null;
  let report: ((error: Error) => void) | null = null;
  const heartbeatSeconds = Math.max(MIN_HEARTBEAT_S, Math.ceil(options.lockMs / 1000));
  const boss = (): Promise<PgBoss> =>
    (started ??= (async () => {
      // Imported here: a service on the embedded store, or one that never runs a job, never loads it.
      const { PgBoss } = await import('pg-boss');
      const instance = new PgBoss({
        db: over(options.pool),
        schema: await queueSchema(options.pool),
        migrate: options.migrate,
        schedule: false,
        // The supervisor fails the carriers whose heartbeat lapsed: it looks twice per heartbeat
        // period, so a dead node's items are taken up between one and one and a half periods later.
        superviseIntervalSeconds: Math.max(1, Math.floor(heartbeatSeconds / 2)),
        monitorIntervalSeconds: Math.max(1, Math.floor(heartbeatSeconds / 2)),
      });
      instance.on('error', (error: Error) => report?.(error));
      await instance.start();
      const policy = { heartbeatSeconds, expireInSeconds: MAX_RUN_S, retryLimit: RETRY_LIMIT, retryDelay: 0, deleteAfterSeconds: 60 * 60 };
      await instance.createQueue(QUEUE, policy);
      // A queue made by an earlier release or another JOB_LOCK_MS takes this one's policy.
      await instance.updateQueue(QUEUE, policy);
      return instance;
    })().catch((error: unknown) => {
      started = null;
      throw error;
    }));

  let ended: string[] = [];
  let completing: NodeJS.Timeout | null = null;
  const takeEnded = (): string[] => {
    if (completing) clearTimeout(completing);
    completing = null;
    const ids = ended;
    ended = [];
    return ids;
  };
  const completeEnded = async (): Promise<void> => {
    const ids = takeEnded();
    if (ids.length > 0) await (await boss()).complete(QUEUE, ids, null, { includeQueued: true });
  };

  return {
    completeSoon(ids) {
      ended.push(...ids);
      if (ended.length > 0) completing ??= setTimeout(() => void completeEnded().catch(() => {}), COMPLETE_AFTER_MS);
    },
    takeEnded,
    onError(given) {
      report = given;
    },
    async send(client, carriers) {
      if (carriers.length === 0) return;
      const jobs = carriers.map((c) => ({
        data: { job: c.jobId, idx: c.index } satisfies Carried,
        group: { id: c.teamId },
        priority: -Math.min(c.ahead, 2 ** 31 - 1),
        ...(c.startAfter === null ? {} : { startAfter: new Date(c.startAfter) }),
      }));
      await (await boss()).insert(QUEUE, jobs, { db: inTransaction(client) });
    },
    async fetch(client, perTeam, max) {
      return (await boss()).fetch<Carried>(QUEUE, { batchSize: max, groupConcurrency: perTeam, db: inTransaction(client) });
    },
    async touch(id) {
      await (await boss()).touch(QUEUE, id);
    },
    async complete(ids, client) {
      if (ids.length === 0) return;
      // Queued ones too: a carrier failed back to the queue (its heartbeat lapsed) whose item ended.
      await (await boss()).complete(QUEUE, [...ids], null, { includeQueued: true, ...(client ? { db: inTransaction(client) } : {}) });
    },
    async dropQueued(client, jobId) {
      const instance = await boss();
      const db = inTransaction(client);
      for (;;) {
        const queued = await instance.findJobs<Carried>(QUEUE, { data: { job: jobId }, queued: true, limit: 10_000, db });
        if (queued.length === 0) return;
        await instance.deleteJob(QUEUE, queued.map((job) => job.id), { db });
      }
    },
    async stop() {
      if (!started) return;
      await completeEnded().catch(() => {});
      const instance = await started.catch(() => null);
      started = null;
      // The pool is the stores': pg-boss leaves it open.
      await instance?.stop({ close: false, graceful: true, timeout: 5_000 });
    },
  };
}

/** Serialises installations of pg-boss's schema: nodes starting together would race on CREATE SCHEMA. */
const INSTALL_LOCK = 0x6a6f6271;

/** `admin migrate`, MIGRATE=auto: installs or upgrades pg-boss's schema, one process at a time; tells `tell` when it installs it. */
export async function migrateQueue(pool: pg.Pool, tell?: (line: string) => void): Promise<void> {
  const schema = await queueSchema(pool);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [INSTALL_LOCK]);
    try {
      const installed = (await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [`${schema}.version`])).rows[0]?.found;
      if (!installed) tell?.(`installing the job queue (pg-boss) in schema ${schema}`);
      const { PgBoss } = await import('pg-boss');
      const instance = new PgBoss({ db: over(client), schema, migrate: true, supervise: false, schedule: false });
      instance.on('error', () => {});
      await instance.start();
      await instance.stop({ close: false, graceful: false });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [INSTALL_LOCK]).catch(() => {});
    }
  } finally {
    client.release();
  }
}
