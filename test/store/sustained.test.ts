// The embedded store under sustained load: its write-ahead log stays bounded under steady
// writes, its checkpoints complete, and long store work (cache pruning, refunds of a backlog
// of abandoned reservations) leaves the event loop free.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkpoint } from '../../src/store/sqlite/maintenance.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { cachedEntry } from '../support/cached-entry.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-wal-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const freshPath = (): string => join(dir, `db-${++seq}.sqlite`);
const walSize = (path: string): number => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};
const KIB = 1024;
const MIB = 1024 * KIB;

/** Polls `check` until it holds or `ms` have passed; returns whether it held. */
async function eventually(check: () => boolean, ms = 15_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await sleep(25);
  }
  return check();
}

describe('the write-ahead log', () => {
  test('stays bounded under a steady stream of writes, and checkpoints complete', async () => {
    const path = freshPath();
    const limit = 256 * KIB;
    const s = openSqliteStores({ path, walMaxBytes: limit });
    let peak = 0;
    try {
      const team = await s.accounts.createTeam({ name: 'wal', credits: 1_000_000, rateLimit: 1_000 });
      let scrapes = 0;
      // What a live scrape writes: a reservation, a cache result, the commit (some 20 KB of log).
      const scrape = async () => {
        const reserved = await s.ledger.reserve(team.id, 1, `req-${scrapes}`, Date.now() + 60_000);
        assert.ok(reserved.ok);
        await s.cache.set(`key-${scrapes % 47}`, `target-${scrapes % 47}`, { value: 'x'.repeat(2_000), storedAt: Date.now() });
        await s.ledger.commit(reserved.reservationId);
        scrapes += 1;
        await sleep(1);
      };
      // Until the background thread has started and cut the log back once.
      while (walSize(path) <= limit) await scrape();
      const started = Date.now();
      while (walSize(path) > limit) {
        assert.ok(Date.now() - started < 15_000, `the log is still ${walSize(path)} bytes after 15 s of writes`);
        await scrape();
      }
      // Then a steady stream: without restarts of the log, it would grow by some 30 MB.
      for (let i = 0; i < 1_500; i += 1) {
        await scrape();
        peak = Math.max(peak, walSize(path));
      }
      // Generous: the point is that it does not grow with the number of writes.
      assert.ok(peak < 8 * MIB, `the log grew to ${(peak / MIB).toFixed(1)} MiB with a limit of 256 KiB`);
      assert.ok(await eventually(() => walSize(path) <= limit), `the log is still ${walSize(path)} bytes once writes stopped`);
      assert.equal(await s.ledger.balance(team.id), 1_000_000 - scrapes);

      // Nothing in the store's own connection pins a snapshot: with frames in the log, a
      // checkpoint from outside copies them all and restarts the log.
      await s.ledger.addCredits(team.id, 1);
      assert.ok(walSize(path) > 0);
      const outside = new DatabaseSync(path, { timeout: 1_000 });
      try {
        // The store's own background checkpoint may be running at that moment (on a busy
        // machine, long enough to be met): that one is busy for a moment and tried again. A
        // pinned snapshot would keep it busy.
        const checkpoint = () => ({ ...outside.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() });
        let result = checkpoint();
        for (const end = Date.now() + 5_000; result.busy !== 0 && Date.now() < end; result = checkpoint()) await sleep(50);
        assert.deepEqual(result, { busy: 0, log: 0, checkpointed: 0 });
        assert.equal(walSize(path), 0);
      } finally {
        outside.close();
      }
    } finally {
      await s.close();
    }
  });

  test('a checkpoint reports what it could not do while a reader holds an old snapshot, and completes after', () => {
    const path = freshPath();
    const writer = new DatabaseSync(path);
    const reader = new DatabaseSync(path);
    const checkpointer = new DatabaseSync(path);
    try {
      writer.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v TEXT)');
      const insert = writer.prepare('INSERT INTO t (v) VALUES (?)');
      for (let i = 0; i < 200; i += 1) insert.run('y'.repeat(4_000));
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) AS n FROM t').get();
      for (let i = 0; i < 200; i += 1) insert.run('z'.repeat(4_000));

      const passive = checkpoint(checkpointer, path, 1 * MIB, 100);
      assert.equal(passive.mode, 'TRUNCATE', 'over the limit, the log is to be restarted');
      assert.equal(passive.busy, true, 'the reader keeps the frames it still reads');
      assert.ok(passive.checkpointedFrames < passive.logFrames);
      assert.ok(walSize(path) > 1 * MIB);

      reader.exec('COMMIT');
      const done = checkpoint(checkpointer, path, 1 * MIB, 100);
      assert.deepEqual({ busy: done.busy, logFrames: done.logFrames, walBytes: done.walBytes }, { busy: false, logFrames: 0, walBytes: 0 });
      assert.equal((writer.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 400);

      insert.run('small');
      const under = checkpoint(checkpointer, path, 1 * MIB, 100);
      assert.deepEqual({ mode: under.mode, busy: under.busy }, { mode: 'PASSIVE', busy: false }, 'under the limit, a passive checkpoint is enough');
      assert.equal(under.checkpointedFrames, under.logFrames);
    } finally {
      checkpointer.close();
      reader.close();
      writer.close();
    }
  });
});

describe('cache pruning', () => {
  test('runs off the event loop, in batches, and drops what it must', async () => {
    const path = freshPath();
    const s = openSqliteStores({ path, cacheMaxAgeMs: 60_000 });
    const raw = new DatabaseSync(path);
    const count = () => (raw.prepare('SELECT count(*) AS n FROM cache').get() as { n: number }).n;
    try {
      const old = Date.now() - 120_000;
      for (let i = 0; i < 3_000; i += 1) await s.cache.set(`old-${i}`, `t-${i}`, { value: 'v', storedAt: old });
      await s.cache.set('fresh', 't-fresh', { value: 'v', storedAt: Date.now() });
      const team = await s.accounts.createTeam({ name: 'prune', credits: 0, rateLimit: 1 });

      let pruned = false;
      const pruning = s.cache.prune(Date.now()).then(() => {
        pruned = true;
      });
      // A write of this thread goes through while the prune is still under way.
      await s.ledger.addCredits(team.id, 5);
      assert.equal(pruned, false, 'the prune held the event loop until it had finished');
      await pruning;

      assert.equal(count(), 1);
      assert.equal(await s.cache.get('old-7'), null, 'no dropped entry is served from memory');
      assert.deepEqual(await s.cache.get('fresh'), cachedEntry('v', (await s.cache.get('fresh'))?.storedAt ?? Number.NaN));
      assert.equal(await s.ledger.balance(team.id), 5);
    } finally {
      raw.close();
      await s.close();
    }
  });

  test('evicts the least recently used entries in batches when over the size bound', async () => {
    const path = freshPath();
    // Each entry: 100-byte value + key + target, about 110 bytes; 2,000 of them, bound 55,000.
    const s = openSqliteStores({ path, cacheMaxBytes: 55_000, cacheTouchFlushMs: 60_000 });
    const raw = new DatabaseSync(path);
    const total = () => (raw.prepare('SELECT coalesce(sum(size), 0) AS total FROM cache').get() as { total: number }).total;
    try {
      for (let i = 0; i < 2_000; i += 1) {
        await s.cache.set(`k${String(i).padStart(4, '0')}`, `t${i % 10}`, { value: 'v'.repeat(100), storedAt: Date.now() });
      }
      await sleep(60); // written together a few milliseconds after they are set
      await s.cache.get('k0000'); // the oldest, but just read
      await s.cache.prune(Date.now());
      assert.ok(total() <= 55_000 * 0.9, `the cache holds ${total()} bytes`);
      assert.ok(total() > 55_000 * 0.8, `the cache was emptied beyond its bound: ${total()} bytes`);
      assert.ok(await s.cache.get('k0000'), 'a recently read entry stays');
      assert.equal(await s.cache.get('k0001'), null, 'the least recently used go');
      assert.ok(await s.cache.get('k1999'));
    } finally {
      raw.close();
      await s.close();
    }
  });
});

describe('refunds of abandoned reservations', () => {
  test('a large backlog is refunded in batches that leave the event loop free between them', async () => {
    const s = openSqliteStores({ path: freshPath() });
    try {
      const team = await s.accounts.createTeam({ name: 'backlog', credits: 1_200, rateLimit: 1 });
      const past = Date.now() - 1_000;
      for (let i = 0; i < 1_200; i += 1) assert.ok((await s.ledger.reserve(team.id, 1, `req-${i}`, past)).ok);
      const other = await s.accounts.createTeam({ name: 'other', credits: 0, rateLimit: 1 });

      let refunded: number | null = null;
      const refunding = s.ledger.refundExpired(Date.now()).then((n) => {
        refunded = n;
      });
      await s.ledger.addCredits(other.id, 1);
      assert.equal(refunded, null, 'the whole backlog was refunded before anything else could run');
      await refunding;
      assert.equal(refunded, 1_200);
      assert.equal(await s.ledger.balance(team.id), 1_200);
    } finally {
      await s.close();
    }
  });
});
