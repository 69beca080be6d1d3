// A batch job's pages reserve their credits together (server/job-credits.ts): those asked while a
// write of the same team, key and day is under way go in the next one, each answered with its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobCredits } from '../../src/server/job-credits.ts';
import type { Ledger, ReserveResult } from '../../src/store/types.ts';

const day = '2026-11-27';

/** A ledger whose reserveEach calls are recorded and answered when `release` is called. */
function recordingLedger() {
  const calls: { teamId: string; keyId: string | undefined; requestIds: string[]; release: (error?: Error) => void }[] = [];
  const ledger = {
    reserveEach: (teamId: string, requests: readonly { requestId: string }[], key?: { id: string }) =>
      new Promise<ReserveResult[]>((resolve, reject) => {
        calls.push({
          teamId,
          keyId: key?.id,
          requestIds: requests.map((r) => r.requestId),
          release: (error) => (error ? reject(error) : resolve(requests.map((r, n) => ({ ok: true, reservationId: `res_${r.requestId}`, balance: 100 - n })))),
        });
      }),
  } as unknown as Ledger;
  return { ledger, calls };
}

test('reservations asked during a write go together in the next, per team and key', async () => {
  const { ledger, calls } = recordingLedger();
  const credits = new JobCredits(ledger);
  const first = credits.reserve('team_a', 'r1', 1, { id: 'key_a', day });
  const waiting = ['r2', 'r3', 'r4'].map((id) => credits.reserve('team_a', id, 1, { id: 'key_a', day }));
  const other = credits.reserve('team_b', 'r5', 1, { id: 'key_b', day });
  assert.deepEqual(calls.map((c) => c.requestIds), [['r1'], ['r5']], 'the first of each is written at once');
  calls[0]?.release();
  assert.deepEqual(await first, { ok: true, reservationId: 'res_r1', balance: 100 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(calls[2]?.requestIds, ['r2', 'r3', 'r4']);
  calls[2]?.release();
  assert.deepEqual((await Promise.all(waiting)).map((r) => r.ok && r.reservationId), ['res_r2', 'res_r3', 'res_r4']);
  calls[1]?.release(new Error('database away'));
  await assert.rejects(other, /database away/);
  // Nothing left waiting: the next is written at once again.
  const again = credits.reserve('team_b', 'r6', 1, { id: 'key_b', day });
  assert.deepEqual(calls[3]?.requestIds, ['r6']);
  calls[3]?.release();
  assert.equal((await again).ok, true);
});

test('a ledger without reserveEach reserves each page on its own', async () => {
  const asked: unknown[][] = [];
  const ledger = { reserve: async (...args: unknown[]) => (asked.push(args), { ok: true, reservationId: 'res_1', balance: 1 }) } as unknown as Ledger;
  const result = await new JobCredits(ledger).reserve('team_a', 'r1', 5, { id: 'key_a', day });
  assert.deepEqual(result, { ok: true, reservationId: 'res_1', balance: 1 });
  assert.deepEqual(asked, [['team_a', 1, 'r1', 5, { id: 'key_a', day }]]);
});
