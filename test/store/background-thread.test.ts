// The embedded store's background thread (checkpointer.ts) starts with the first write of the
// process, not when the store opens: the timers of an idle service (refunds of abandoned
// reservations, pruning, the readiness probe's write) start no thread; a commit that changes
// rows, or request records, does. Worker threads are counted from the process report.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import type { Stores } from '../../src/store/types.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Worker threads of this process that have started (the report lists a thread once it runs). */
const workers = (): number => (process.report.getReport() as { workers: unknown[] }).workers.length;

/** Polls until `count` threads have started or 15 s have passed; returns the count. */
async function startedWorkers(count: number): Promise<number> {
  for (const until = Date.now() + 15_000; workers() < count && Date.now() < until; ) await sleep(25);
  return workers();
}

/** What an idle service's timers do to the store (server/plugins/maintenance.ts, /readyz). */
async function idleRounds(s: Stores, now: number): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await s.ledger.refundExpired(now);
    await s.cache.prune(now);
    await s.requests.prune(now - 1_000);
    await s.users.pruneSessions(now);
    await s.idempotency.prune(now);
    await s.probeWrite();
  }
}

test('an idle store starts no background thread; its first commit that changes rows does', async () => {
  const s = openSqliteStores({ path: join(dir, 'write.sqlite') });
  try {
    await idleRounds(s, Date.now());
    assert.equal(workers(), 0);
    await s.accounts.createTeam({ name: 'first write', credits: 10, rateLimit: 10 });
    assert.equal(await startedWorkers(1), 1);
    // Later work goes through the same thread.
    await idleRounds(s, Date.now());
    assert.equal(workers(), 1);
  } finally {
    await s.close();
  }
});

test('request records start the background thread, which writes them', async () => {
  const s = openSqliteStores({ path: join(dir, 'records.sqlite') });
  try {
    await idleRounds(s, Date.now());
    assert.equal(workers(), 0);
    const at = Date.now();
    await s.requests.append([
      { requestId: 'req_thread_1', at, teamId: 'team_1', keyId: 'key_1', endpoint: '/v1/snapmsg/profile', status: 200, errorCode: null, credits: 1, cached: false, durationMs: 12 },
    ]);
    assert.equal(workers(), 1);
    const page = await s.requests.list({ teamId: 'team_1' });
    assert.deepEqual(
      page.records.map((r) => r.requestId),
      ['req_thread_1'],
    );
  } finally {
    await s.close();
  }
});
