// Reservations of several pages' credits at once on PostgreSQL (Ledger.reserveEach), as a batch
// job's pages make them (server/job-credits.ts): each answered as `reserve` would have answered
// it, one after another, and racing batches never overdraw the balance or a key's daily limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openPostgresStores, type PostgresStores } from '../../src/store/postgres/index.ts';
import { utcDay } from '../../src/store/types.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

let backends: TestBackends;
let s: PostgresStores;
before(async () => {
  backends = await testBackends();
  s = await openPostgresStores({ url: await backends.freshDatabaseUrl(), schema: 'migrate' });
});
after(async () => {
  await s.close();
  await backends.drop();
});

let n = 0;
const asks = (count: number, deadline = Date.now() + 60_000) => Array.from({ length: count }, () => ({ requestId: `req_${++n}`, deadline }));
const reserveEach = (...args: Parameters<NonNullable<PostgresStores['ledger']['reserveEach']>>) => (s.ledger.reserveEach as NonNullable<PostgresStores['ledger']['reserveEach']>)(...args);

async function teamWithKey(credits: number, dailyCreditLimit: number | null) {
  const team = await s.accounts.createTeam({ name: `t${++n}`, credits, rateLimit: 100 });
  const key = await s.accounts.createKey({ teamId: team.id, name: 'k', hash: `hash_${n}`, prefix: 'ps_live_', last4: 'abcd', dailyCreditLimit });
  return { team, key: { id: key.id, day: utcDay(Date.now()) } };
}

async function consistent(teamId: string): Promise<{ balance: number; pending: number }> {
  const usage = await s.ledger.usage(teamId);
  assert.ok(usage);
  const entries = await s.ledger.entries(teamId, 10_000);
  assert.equal(entries.reduce((sum, e) => sum + e.amount, 0), usage.balance, 'ledger sum equals balance');
  return { balance: usage.balance, pending: usage.pending };
}

describe('postgres: reserveEach', () => {
  test('grants as many as the key allows, each its own reservation, and answers the rest as reserve would', async () => {
    const { team, key } = await teamWithKey(5, 3);
    const results = await reserveEach(team.id, asks(4), key);
    assert.deepEqual(results.map((r) => r.ok && r.balance), [4, 3, 2, false]);
    assert.deepEqual(results[3], { ok: false, reason: 'key-limit', balance: 2, limit: 3, spent: 3 });
    const ids = results.flatMap((r) => (r.ok ? [r.reservationId] : []));
    assert.equal(new Set(ids).size, 3);
    assert.deepEqual(await consistent(team.id), { balance: 2, pending: 3 });
    assert.equal((await s.ledger.entries(team.id, 100)).filter((e) => e.reason === 'charge' && e.amount === -1).length, 3);
    // Settled one by one like any other: a refund gives the credit and the key's spending back.
    assert.deepEqual(await s.ledger.commit(ids[0] as string), { charged: true, balance: 2 });
    assert.deepEqual(await s.ledger.refund(ids[1] as string), { refunded: true, balance: 3 });
    const next = await reserveEach(team.id, asks(2), key);
    assert.deepEqual(next.map((r) => r.ok), [true, false]);
    assert.deepEqual(await consistent(team.id), { balance: 2, pending: 2 });
  });

  test('grants as many as the balance allows, and records the balance alerts once', async () => {
    const { team, key } = await teamWithKey(3, null);
    await s.accounts.updateTeam(team.id, { lowBalanceAlert: 2 });
    const results = await reserveEach(team.id, asks(5), key);
    assert.deepEqual(results.map((r) => r.ok), [true, true, true, false, false]);
    assert.deepEqual(results[4], { ok: false, reason: 'balance', balance: 0 });
    assert.deepEqual(await consistent(team.id), { balance: 0, pending: 3 });
    const events = (await s.events.list(team.id, 100)).map((e) => e.type).sort();
    assert.deepEqual(events, ['credits.exhausted', 'credits.low']);
    assert.deepEqual(await reserveEach(team.id, asks(1), key), [{ ok: false, reason: 'balance', balance: 0 }]);
  });

  test('racing batches never overdraw the balance nor the key', async () => {
    const { team, key } = await teamWithKey(57, null);
    const results = (await Promise.all(Array.from({ length: 20 }, () => reserveEach(team.id, asks(10), key)))).flat();
    assert.equal(results.filter((r) => r.ok).length, 57);
    assert.deepEqual(await consistent(team.id), { balance: 0, pending: 57 });
    const limited = await teamWithKey(100, 33);
    const more = (await Promise.all(Array.from({ length: 10 }, () => reserveEach(limited.team.id, asks(7), limited.key)))).flat();
    assert.equal(more.filter((r) => r.ok).length, 33);
    assert.ok(more.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'key-limit'));
    assert.deepEqual(await consistent(limited.team.id), { balance: 67, pending: 33 });
  });

  test('an unknown team or key fails, and nothing is taken', async () => {
    const { team, key } = await teamWithKey(5, null);
    await assert.rejects(reserveEach('team_nope', asks(2), key), /unknown team/);
    await assert.rejects(reserveEach(team.id, asks(2), { id: 'key_nope', day: key.day }), /unknown key/);
    assert.deepEqual(await consistent(team.id), { balance: 5, pending: 0 });
  });
});
