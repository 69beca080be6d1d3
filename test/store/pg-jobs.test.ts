// The PostgreSQL job store's delivery by pg-boss: what the embedded store does on its own clock
// (behaviour.ts, `clockedClaims`) checked here as pg-boss does it: a dead node's items come back
// when its heartbeats stop (pg-boss's supervisor), a requeued item waits on the database's
// clock, and a carrier delivered again after its item ended runs nothing and charges nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { openPostgresStores, type PostgresStores } from '../../src/store/postgres/index.ts';
import { jobStore } from '../../src/store/postgres/jobs.ts';
import { database } from '../../src/store/postgres/pool.ts';
import { itemQueue, queueSchema, type ItemQueue } from '../../src/store/postgres/queue.ts';
import { BackendMonitor } from '../../src/store/monitor.ts';
import { jobEventData } from '../../src/store/job-rows.ts';
import type { FastifyBaseLogger } from 'fastify';
import { JobRunner } from '../../src/work/jobs.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

let backends: TestBackends;
before(async () => {
  backends = await testBackends();
});
after(() => backends.drop());

const QUEUE = 'job-items';

/** The stores on a database of their own, with a pg-boss instance of the test's on its queue. */
async function open(): Promise<{ s: PostgresStores; url: string; pool: pg.Pool; schema: string; boss: PgBoss; close: () => Promise<void> }> {
  const url = await backends.freshDatabaseUrl();
  const s = await openPostgresStores({ url, schema: 'migrate', jobLockMs: 10_000 });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const schema = await queueSchema(pool);
  const boss = new PgBoss({ db: { executeSql: async (text: string, values?: unknown[]) => pool.query(text, values) }, schema, migrate: false, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  return {
    s,
    url,
    pool,
    schema,
    boss,
    async close() {
      await boss.stop({ close: false, graceful: false });
      await s.close();
      await pool.end();
    },
  };
}

/** pg-boss's supervisor, now (its turn is not waited for); `stale`: the active carriers' heartbeats stopped a day ago, as when their node died. */
async function supervise(t: { pool: pg.Pool; schema: string; boss: PgBoss }, stale: boolean): Promise<void> {
  if (stale) await t.pool.query(`UPDATE ${t.schema}.job SET heartbeat_on = now() - interval '1 day' WHERE state = 'active'`);
  await t.pool.query(`UPDATE ${t.schema}.queue SET monitor_claim_on = NULL, monitor_on = NULL`);
  await t.boss.supervise(QUEUE);
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ endpoint: '/v1/snapmsg/profile', params: { username: `user${i}` } }));

describe('postgres job store: delivery by pg-boss', () => {
  test("a dead node's item comes back when its heartbeats stop, and goes on from its stored pages; the dead claim can no longer store", async () => {
    const t = await open();
    try {
      const team = await t.s.accounts.createTeam({ name: 'dead', credits: 10, rateLimit: 100 });
      const job = await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 5, items: items(1) }, 10, 1_000);
      assert.ok(job);
      const first = await t.s.jobs.claim('dead-node', Date.now() + 10_000, Date.now(), 1);
      assert.ok(first);
      assert.deepEqual([first.attempts, first.storedPages, first.lastPage], [1, 0, null]);
      assert.equal(await t.s.jobs.renew(first, 'dead-node', Date.now() + 10_000), true);
      assert.deepEqual(await t.s.jobs.savePage(first, 'dead-node', '{"page":1}', null, Date.now()), { saved: true, charged: false });
      await supervise(t, false);
      assert.equal(await t.s.jobs.claim('live-node', Date.now() + 10_000, Date.now(), 1), null, 'its heartbeat is fresh: nothing to take up');
      await supervise(t, true);
      const second = await t.s.jobs.claim('live-node', Date.now() + 10_000, Date.now(), 1);
      assert.ok(second, 'taken up again');
      assert.deepEqual([second.index, second.attempts, second.storedPages, second.lastPage], [0, 2, 1, '{"page":1}']);
      assert.equal(await t.s.jobs.renew(first, 'dead-node', Date.now() + 10_000), false);
      assert.equal((await t.s.jobs.savePage(first, 'dead-node', '{}', null, Date.now())).saved, false);
      assert.equal(await t.s.jobs.finish(first, 'dead-node', { status: 'succeeded' }, Date.now()), null);
      assert.ok(await t.s.jobs.finish(second, 'live-node', { status: 'succeeded' }, Date.now()));
      assert.equal((await t.s.jobs.get(team.id, job.id))?.status, 'completed');
      assert.equal(await t.s.jobs.claim('live-node', Date.now() + 10_000, Date.now(), 1), null, 'nothing left');
    } finally {
      await t.close();
    }
  });

  test('a requeued item waits for its next attempt; a given-back claim is not counted as one', async () => {
    const t = await open();
    try {
      const team = await t.s.accounts.createTeam({ name: 'requeue', credits: 10, rateLimit: 100 });
      await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(1) }, 10, 1_000);
      const item = await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4);
      assert.ok(item);
      assert.equal(await t.s.jobs.requeue(item, 'node-a', Date.now() + 1_500, { code: 'UPSTREAM_ERROR', message: 'down' }), true);
      assert.equal(await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4), null, 'not before its next attempt');
      await new Promise((resolve) => setTimeout(resolve, 1_600));
      const again = await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4);
      assert.ok(again);
      assert.equal(again.attempts, 2);
      assert.equal(await t.s.jobs.requeue(again, 'node-a', Date.now(), null, true), true);
      assert.equal((await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4))?.attempts, 2, 'the given-back claim is not an attempt');
    } finally {
      await t.close();
    }
  });

  test('a carrier delivered again after its item was finished and charged runs nothing and charges nothing', async () => {
    const t = await open();
    try {
      const team = await t.s.accounts.createTeam({ name: 'again', credits: 10, rateLimit: 100 });
      const job = await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(1) }, 10, 1_000);
      assert.ok(job);
      const item = await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4);
      assert.ok(item);
      const reservation = await t.s.ledger.reserve(team.id, 1, 'req-1', Date.now() + 60_000);
      assert.ok(reservation.ok);
      assert.deepEqual(await t.s.jobs.savePage(item, 'node-a', '{"n":1}', reservation.reservationId, Date.now()), { saved: true, charged: true });
      assert.ok(await t.s.jobs.finish(item, 'node-a', { status: 'succeeded' }, Date.now()));
      // pg-boss delivers at least once: the item's carrier once more, as a node that died after
      // the item's commit and before the queue heard of it would leave it.
      await t.boss.insert(QUEUE, [{ data: { job: job.id, idx: 0 }, group: { id: team.id } }]);
      assert.equal(await t.s.jobs.claim('node-b', Date.now() + 60_000, Date.now(), 4), null, 'the item has ended: nothing runs');
      const queued = await t.boss.findJobs(QUEUE, { queued: true });
      assert.equal(queued.length, 0, 'the carrier was completed');
      const [ended] = await t.s.jobs.items(job.id, { limit: 10 });
      assert.deepEqual([ended?.status, ended?.pages, ended?.creditsCharged, ended?.attempts], ['succeeded', ['{"n":1}'], 1, 1]);
      const done = await t.s.jobs.get(team.id, job.id);
      assert.ok(done);
      assert.equal(done.creditsCharged, 1);
      assert.equal(await t.s.ledger.balance(team.id), 9, 'charged once');
      const events = (await t.s.events.list(team.id)).filter((e) => e.type === 'job.completed');
      assert.deepEqual(events.map((e) => e.data), [jobEventData(done)], 'job.completed once, the job as the API shows it');
    } finally {
      await t.close();
    }
  });

  test('cancel deletes the carriers of the items not started', async () => {
    const t = await open();
    try {
      const team = await t.s.accounts.createTeam({ name: 'cancel', credits: 10, rateLimit: 100 });
      const job = await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(5) }, 10, 1_000);
      assert.ok(job);
      const running = await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4);
      assert.ok(running);
      assert.equal((await t.boss.findJobs(QUEUE, { queued: true })).length, 4);
      await t.s.jobs.cancel(team.id, job.id, Date.now());
      assert.equal((await t.boss.findJobs(QUEUE, { queued: true })).length, 0);
      assert.equal(await t.s.jobs.claim('node-b', Date.now() + 60_000, Date.now(), 4), null, 'cancelled items never run');
      assert.ok(await t.s.jobs.finish(running, 'node-a', { status: 'succeeded' }, Date.now()));
      assert.deepEqual((await t.s.jobs.items(job.id, { limit: 10, status: 'cancelled' })).map((i) => i.index), [1, 2, 3, 4]);
    } finally {
      await t.close();
    }
  });
  test("a team at its cap takes its next item as soon as one has ended: the next claim completes the ended item's carrier before it counts", async () => {
    const t = await open();
    try {
      const team = await t.s.accounts.createTeam({ name: 'turns', credits: 10, rateLimit: 100 });
      const job = await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(3) }, 10, 1_000);
      assert.ok(job);
      const first = await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 1);
      assert.ok(first);
      assert.equal(await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 1), null, 'at its cap of 1');
      assert.ok(await t.s.jobs.finish(first, 'node-a', { status: 'failed', error: { code: 'BAD_REQUEST', message: 'no' } }, Date.now()));
      const second = await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 1);
      assert.equal(second?.index, 1, 'claimed at once, not once a timer has completed the carrier');
      assert.equal((await t.boss.findJobs(QUEUE, { data: { job: job.id, idx: 0 } }))[0]?.state, 'completed');
      assert.ok((await t.s.jobs.saveLastPage(second, 'node-a', '{"n":1}', null, Date.now())).saved);
      assert.equal((await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 1))?.index, 2, 'the same after a last page stored with its end');
    } finally {
      await t.close();
    }
  });

  test('a cancel waits for the claim lock (a claim locks items, then their job: a cancel locking the job first would deadlock with it)', async () => {
    const t = await open();
    const holder = await t.pool.connect();
    // Whether a statement of this database waits for the claim lock (the store's, 0x6a6f6273).
    const waiting = async (): Promise<boolean> =>
      Number(
        (
          await t.pool.query(
            "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [0x6a6f6273],
          )
        ).rows[0].n,
      ) > 0;
    /** Until `pending` waits for the lock; fails when it ends first (it did not take the lock). */
    const untilWaiting = async (pending: Promise<unknown>): Promise<void> => {
      let ended = false;
      void pending.finally(() => (ended = true)).catch(() => {});
      while (!(await waiting())) {
        assert.equal(ended, false, 'ended without waiting for the claim lock');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    try {
      const team = await t.s.accounts.createTeam({ name: 'queued', credits: 10, rateLimit: 100 });
      const job = await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(5) }, 10, 1_000);
      assert.ok(job);
      assert.ok(await t.s.jobs.claim('node-a', Date.now() + 60_000, Date.now(), 10));
      // A claim holds the lock.
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [0x6a6f6273]);
      const cancel = t.s.jobs.cancel(team.id, job.id, Date.now());
      await untilWaiting(cancel);
      await holder.query('COMMIT');
      assert.equal((await cancel)?.cancelled, 4);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
      await t.close();
    }
  });
  test('a claim that PostgreSQL ends as the victim of a deadlock (40P01) is tried again at once: no item is lost, the carriers it was completing are completed', async () => {
    const t = await open();
    // A job store over the same database whose queue's fetch, when told to, ends the claim's
    // transaction as PostgreSQL ends a deadlock's victim: an error 40P01 raised in it, after the
    // ended carriers were completed and new ones marked active (all rolled back).
    const pool = new pg.Pool({ connectionString: t.url, max: 4 });
    const monitor = new BackendMonitor('PostgreSQL', async () => {});
    const real = itemQueue({ pool, migrate: false, lockMs: 10_000 });
    let victims = 0;
    const queue: ItemQueue = {
      ...real,
      async fetch(client, perTeam, max) {
        const carriers = await real.fetch(client, perTeam, max);
        if (victims > 0) {
          victims--;
          await client.query("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = 'deadlock_detected'; END $$");
        }
        return carriers;
      },
    };
    const jobs = jobStore(database(pool, () => false, monitor), queue);
    try {
      const team = await t.s.accounts.createTeam({ name: 'victim', credits: 10, rateLimit: 100 });
      const job = await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(3) }, 10, 1_000);
      assert.ok(job);
      const first = await jobs.claim('node-a', Date.now() + 60_000, Date.now(), 4);
      assert.equal(first?.index, 0);
      // Its carrier is left for the next claim to complete.
      assert.ok(await jobs.finish(first, 'node-a', { status: 'succeeded' }, Date.now()));
      victims = 1;
      const claimed = await jobs.claimUpTo('node-a', Date.now() + 60_000, Date.now(), 4, 4);
      assert.equal(victims, 0, 'the claim was a deadlock victim once');
      assert.deepEqual(claimed.map((item) => [item.index, item.attempts]), [[1, 1], [2, 1]], 'taken by the claim tried again; the aborted one counted no attempt');
      assert.equal((await t.boss.findJobs(QUEUE, { data: { job: job.id, idx: 0 } }))[0]?.state, 'completed', "the ended item's carrier was completed");
      for (const item of claimed) assert.ok(await jobs.finish(item, 'node-a', { status: 'succeeded' }, Date.now()));
      assert.equal((await t.s.jobs.get(team.id, job.id))?.status, 'completed');
      assert.deepEqual((await jobs.items(job.id, { limit: 10 })).map((item) => [item.status, item.attempts]), [['succeeded', 1], ['succeeded', 1], ['succeeded', 1]]);
      await real.stop();
      assert.deepEqual((await t.boss.findJobs(QUEUE, {})).map((carrier) => carrier.state), ['completed', 'completed', 'completed'], 'every carrier completed, none left to run');
    } finally {
      await real.stop();
      monitor.stop();
      await pool.end();
      await t.close();
    }
  });

  test("pg-boss's errors in the background (its supervisor's) reach the job runner's log", async () => {
    const t = await open();
    const logged: { error: unknown; message: string }[] = [];
    let seen: () => void = () => {};
    const reached = new Promise<void>((resolve) => (seen = resolve));
    const log = {
      error(fields: { err?: unknown }, message: string) {
        logged.push({ error: fields.err, message });
        seen();
      },
    } as unknown as FastifyBaseLogger;
    // Only its constructor runs here: it hands the store the log's reporter.
    new JobRunner(t.s, null as never, new Map(), null as never, log, null as never);
    try {
      const team = await t.s.accounts.createTeam({ name: 'errors', credits: 10, rateLimit: 100 });
      // Starts pg-boss, then takes its queues' table away: its next supervision fails.
      assert.ok(await t.s.jobs.create({ teamId: team.id, keyId: 'key_x', test: false, label: null, cacheMaxAge: null, maxPages: 1, items: items(1) }, 10, 1_000));
      await t.pool.query(`ALTER TABLE ${t.schema}.queue RENAME TO queue_away`);
      try {
        await reached;
      } finally {
        await t.pool.query(`ALTER TABLE ${t.schema}.queue_away RENAME TO queue`);
      }
      assert.equal(logged[0]?.message, 'job queue (pg-boss) failed in the background');
      assert.match(String((logged[0]?.error as Error).message), /queue/);
    } finally {
      await t.close();
    }
  });
});
