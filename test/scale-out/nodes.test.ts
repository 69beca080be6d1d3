// Two nodes over the same PostgreSQL and Redis, in one process (each its own app, extractors
// and memory): what one node does is seen by the other at once.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, fixtureResult, startHarness, type Harness } from '../api/harness.ts';
import { expectError, ledgerState, success, until, urlOf, variantQuery } from '../api/support.ts';

/** A promise the test releases when it chooses. */
function gate(): { opened: Promise<void>; release: () => void } {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { opened, release };
}

describe('two nodes on PostgreSQL + Redis', () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    a = await startHarness({ credits: 1000, set: 'scale-out' });
    b = await startHarness({ nodeOf: a });
  });
  after(async () => {
    await b.close();
    await a.close();
  });
  afterEach(() => {
    a.script = defaultScript;
    b.script = defaultScript;
  });

  test('identical live scrapes in flight on both nodes share one upstream fetch', async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await a.newTeam(100, 1000);
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'across'));
    const { opened, release } = gate();
    a.script = b.script = async (e) => {
      await opened;
      return fixtureResult(e);
    };
    const calls = a.calls.length + b.calls.length;
    const first = a.get(url, { 'x-api-key': team.key });
    await until(() => a.calls.length + b.calls.length === calls + 1);
    const others = [...Array.from({ length: 5 }, () => b.get(url, { 'x-api-key': team.key })), ...Array.from({ length: 5 }, () => a.get(url, { 'x-api-key': team.key }))];
    await until(async () => (await ledgerState(a, team.team.id)).pending === 11, 3000);
    release();
    const bodies = [await first, ...(await Promise.all(others))].map(success);
    assert.equal(a.calls.length + b.calls.length, calls + 1, 'one upstream fetch for both nodes');
    for (const body of bodies) {
      assert.equal(body.meta.creditsCharged, 1);
      assert.deepEqual(body.data, bodies[0]?.data);
    }
    const state = await ledgerState(a, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [89, 89, 0]);
  });

  test("the other node's failure is every waiter's failure, refunded", async () => {
    const endpoint = byId('shopfront.shop');
    const team = await a.newTeam(100, 1000);
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'fails-across'));
    const { opened, release } = gate();
    a.script = b.script = async (e) => {
      await opened;
      throw new UpstreamOutcome('blocked', e.platform, 'captcha');
    };
    const calls = a.calls.length + b.calls.length;
    const first = a.get(url, { 'x-api-key': team.key });
    await until(() => a.calls.length + b.calls.length === calls + 1);
    const waiting = Promise.all(Array.from({ length: 3 }, () => b.get(url, { 'x-api-key': team.key })));
    await until(async () => (await ledgerState(a, team.team.id)).pending === 4, 3000);
    release();
    for (const response of [await first, ...(await waiting)]) expectError(response, 502, 'UPSTREAM_BLOCKED', { authed: true });
    assert.equal(a.calls.length + b.calls.length, calls + 1);
    const state = await ledgerState(a, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [100, 100, 0]);
  });

  test('a waiter scrapes by itself when the holder is gone without an answer', async () => {
    const endpoint = byId('snapmsg.profile');
    const team = await a.newTeam(100, 1000);
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'orphan'));
    // Find the flight's lock by letting one scrape through, then plant a lock with nobody behind it.
    const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      let seenKey = '';
      a.script = async (e) => {
        const keys = await redis.keys(`${a.openAnother.redisPrefix}flight:*:lock`);
        seenKey = keys[0] ?? '';
        return fixtureResult(e);
      };
      success(await a.get(url, { 'x-api-key': team.key }));
      assert.match(seenKey, /^test:.+:flight:.+:lock$/);
      await redis.set(seenKey, 'a node that died', 'PX', 1_500);
      const started = Date.now();
      const calls = b.calls.length;
      const body = success(await b.get(url, { 'x-api-key': team.key }));
      assert.equal(body.meta.creditsCharged, 1);
      assert.ok(Date.now() - started >= 1_000, 'it waited for the lock to lapse');
      assert.equal(b.calls.length, calls + 1, 'and then scraped by itself');
    } finally {
      redis.disconnect();
    }
  });

  test('a key revoked through one node is refused by the other from the next request', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await a.newTeam(10, 1000);
    const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'revoke'));
    success(await b.get(url, { 'x-api-key': team.key }));
    const cli = await a.openAnother();
    try {
      assert.equal(await cli.accounts.revokeKey(team.keyId), true);
    } finally {
      await cli.close();
    }
    expectError(await b.get(url, { 'x-api-key': team.key }), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await a.get(url, { 'x-api-key': team.key }), 401, 'UNAUTHORIZED', { authed: false });
  });

  test('the rate limit holds across both nodes', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await a.newTeam(1000, 30);
    const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'limit'));
    success(await a.get(url, { 'x-api-key': team.key }));
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).get(url, { 'x-api-key': team.key })));
    const admitted = responses.filter((r) => r.statusCode === 200).length;
    assert.equal(admitted, 29);
    assert.equal(responses.filter((r) => r.statusCode === 429).length, 31);
  });
});
