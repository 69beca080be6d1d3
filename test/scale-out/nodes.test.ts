// Two nodes over the same PostgreSQL and Redis, in one process (each its own app, extractors
// and memory): what one node does is seen by the other at once.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { openPostgresStores } from '../../src/store/postgres/index.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, fixtureResult, startHarness, type Harness } from '../api/harness.ts';
import { expectError, flightShares, gate, ledgerState, success, until, urlOf, variantQuery } from '../api/support.ts';
import { TEST_REDIS_URL } from '../support/backends.ts';

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

  /**
   * Waits until every request is in the flight before the holder is let go: `onA` and `onB`
   * joined their own node's scrape, and the node without the upstream fetch waits on the
   * holder's channel. (A request that holds its credit but has not joined yet when the flight
   * ends scrapes by itself, rightly; the ledger's pending count alone does not tell.)
   */
  async function allJoined(before: { a: number; b: number }, onA: number, onB: number): Promise<void> {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const joined = await until(
        async () =>
          (await flightShares(a)) === before.a + onA &&
          (await flightShares(b)) === before.b + onB &&
          ((await redis.pubsub('CHANNELS', `${a.openAnother.redisPrefix}flight:*:done`)) as string[]).length === 1,
        3000,
      );
      assert.ok(joined, 'every request joined the flight');
    } finally {
      redis.disconnect();
    }
  }

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
    const shares = { a: await flightShares(a), b: await flightShares(b) };
    const first = a.get(url, { 'x-api-key': team.key });
    await until(() => a.calls.length + b.calls.length === calls + 1);
    const others = [...Array.from({ length: 5 }, () => b.get(url, { 'x-api-key': team.key })), ...Array.from({ length: 5 }, () => a.get(url, { 'x-api-key': team.key }))];
    await allJoined(shares, 5, 4);
    assert.equal((await ledgerState(a, team.team.id)).pending, 11);
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
    const shares = { a: await flightShares(a), b: await flightShares(b) };
    const first = a.get(url, { 'x-api-key': team.key });
    await until(() => a.calls.length + b.calls.length === calls + 1);
    const waiting = Promise.all(Array.from({ length: 3 }, () => b.get(url, { 'x-api-key': team.key })));
    await allJoined(shares, 0, 2);
    assert.equal((await ledgerState(a, team.team.id)).pending, 4);
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

  test('an Idempotency-Key holds across nodes: 409 on one while the other runs it, then the replay byte for byte on both, charged once', async () => {
    const endpoint = byId('snapmsg.profile');
    const team = await a.newTeam(100, 1000);
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'idemnodes'));
    const headers = { 'x-api-key': team.key, 'idempotency-key': 'order-7-attempt' };
    const { opened, release } = gate();
    a.script = async (e) => {
      await opened;
      return fixtureResult(e);
    };
    const calls = a.calls.length + b.calls.length;
    const first = a.get(url, headers);
    await until(() => a.calls.length + b.calls.length === calls + 1);
    const busy = await b.get(url, headers);
    expectError(busy, 409, 'IDEMPOTENCY_IN_PROGRESS', { authed: true });
    expectError(await b.get(urlOf(endpoint, {}, variantQuery(endpoint, 'idemother')), headers), 422, 'IDEMPOTENCY_KEY_REUSED', { authed: true });
    release();
    const answered = await first;
    assert.equal(success(answered).meta.creditsCharged, 1);
    for (const node of [b, a]) {
      const again = await node.get(url, headers);
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.ok(again.rawPayload.equals(answered.rawPayload));
    }
    // 40 more at once, half on each node: replays all.
    const racing = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).get(url, headers)));
    for (const response of racing) assert.ok(response.rawPayload.equals(answered.rawPayload));
    assert.equal(a.calls.length + b.calls.length, calls + 1);
    const state = await ledgerState(a, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [99, 99, 0]);
  });

  test('50 requests with one fresh Idempotency-Key racing on both nodes: one runs and is charged, the rest 409 or its replay', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await a.newTeam(100, 1000);
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'idemrace'));
    const headers = { 'x-api-key': team.key, 'idempotency-key': 'race-key-1' };
    a.script = b.script = async (e) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return fixtureResult(e);
    };
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).get(url, headers)));
    const ran = responses.filter((response) => response.statusCode === 200 && response.headers['idempotent-replayed'] === undefined);
    assert.equal(ran.length, 1);
    for (const response of responses) {
      if (response.statusCode === 409) expectError(response, 409, 'IDEMPOTENCY_IN_PROGRESS', { authed: true });
      else assert.ok(response.rawPayload.equals(ran[0]?.rawPayload as Buffer));
    }
    const state = await ledgerState(a, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [99, 99, 0]);
  });

  test("a key's daily credit limit of 5 under 100 live scrapes racing over both nodes: exactly 5 charged, the rest 402", async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await a.newTeam(1000, 1000);
    await a.stores.accounts.updateKey(team.keyId, { dailyCreditLimit: 5 });
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).get(urlOf(endpoint, {}, variantQuery(endpoint, `nodelimit${i}`)), { 'x-api-key': team.key })));
    assert.equal(responses.filter((response) => response.statusCode === 200).length, 5);
    for (const response of responses.filter((candidate) => candidate.statusCode !== 200)) expectError(response, 402, 'KEY_CREDIT_LIMIT', { authed: true });
    const state = await ledgerState(a, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [995, 995, 0]);
  });

  test('live scrapes racing over both nodes across the low-balance alert and down to 0 record each crossing once', async () => {
    const endpoint = byId('snapmsg.profile');
    const team = await a.newTeam(20, 1000);
    await a.stores.accounts.updateTeam(team.team.id, { lowBalanceAlert: 7 });
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).get(urlOf(endpoint, {}, variantQuery(endpoint, `alertnode${i}`)), { 'x-api-key': team.key })));
    assert.equal(responses.filter((response) => response.statusCode === 200).length, 20);
    assert.deepEqual(
      (await a.stores.events.list(team.team.id)).map((event) => [event.type, event.data]),
      [
        ['credits.low', { balance: 6, threshold: 7 }],
        ['credits.exhausted', { balance: 0 }],
      ],
    );
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

  describe('keys a node remembers, checked against the copy in Redis', () => {
    let redis: Redis;
    let sql: pg.Client;
    before(async () => {
      redis = new Redis(TEST_REDIS_URL);
      sql = new pg.Client({ connectionString: a.openAnother.databaseUrl });
      await sql.connect();
    });
    after(async () => {
      redis.disconnect();
      await sql.end();
    });
    const copyOf = (teamId: string) => `${a.openAnother.redisPrefix}team:${teamId}`;

    test('a cache hit needs no PostgreSQL statement once the node has seen the key', async () => {
      const endpoint = byId('shopfront.shop');
      const team = await a.newTeam(50, 1000);
      const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'no-pg'));
      success(await b.get(url, { 'x-api-key': team.key }));
      success(await b.get(url, { 'x-api-key': team.key }));
      const trips = () => b.stores.roundTrips?.() ?? {};
      // The node's work off the request path (request records written every second, the
      // reaper) also counts, whenever it falls within the five hits: on a busy machine they take
      // long enough for it to. A window of five hits without any PostgreSQL round trip shows
      // that a hit needs none; a hit that needed one would leave no such window.
      const windows: { postgres: number; redis: number }[] = [];
      for (let attempt = 0; attempt < 5 && !windows.some((window) => window.postgres === 0); attempt++) {
        await b.app.writeRecords();
        const before = trips();
        for (let i = 0; i < 5; i++) assert.equal(success(await b.get(url, { 'x-api-key': team.key })).meta.cached, true);
        const after = trips();
        windows.push({ postgres: (after.postgres ?? 0) - (before.postgres ?? 0), redis: (after.redis ?? 0) - (before.redis ?? 0) });
      }
      const quiet = windows.find((window) => window.postgres === 0);
      assert.ok(quiet, `no PostgreSQL round trip: ${JSON.stringify(windows)}`);
      assert.equal(quiet.redis, 10, 'the gate and the cache read: two Redis round trips per hit');
    });

    test("a cache hit on one node reports the balance after the other node's charges", async () => {
      const endpoint = byId('snapmsg.profile');
      const team = await a.newTeam(50, 1000);
      const hit = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'balance-hit'));
      success(await b.get(hit, { 'x-api-key': team.key }));
      assert.equal(success(await b.get(hit, { 'x-api-key': team.key })).meta.creditsRemaining, 49);
      for (let i = 0; i < 3; i++) success(await a.get(urlOf(endpoint, {}, variantQuery(endpoint, `balance-live-${i}`)), { 'x-api-key': team.key }));
      const body = success(await b.get(hit, { 'x-api-key': team.key }));
      assert.equal(body.meta.cached, true);
      assert.equal(body.meta.creditsRemaining, 46);
      const cli = await a.openAnother();
      try {
        await cli.ledger.addCredits(team.team.id, 100);
      } finally {
        await cli.close();
      }
      assert.equal(success(await b.get(hit, { 'x-api-key': team.key })).meta.creditsRemaining, 146, 'a top-up through the CLI too');
    });

    test('a rate limit changed through the CLI holds from the next request on a node that remembers the key', async () => {
      const endpoint = byId('linkpage-a.profile');
      const team = await a.newTeam(50, 1000);
      const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'new-limit'));
      for (let i = 0; i < 3; i++) success(await b.get(url, { 'x-api-key': team.key }));
      const cli = await a.openAnother();
      try {
        await cli.accounts.updateTeam(team.team.id, { rateLimit: 3 });
      } finally {
        await cli.close();
      }
      const refused = expectError(await b.get(url, { 'x-api-key': team.key }), 429, 'RATE_LIMITED', { authed: true });
      assert.match(refused.message, /Rate limit of 3 requests/);
    });

    test('a copy lost from Redis (a restart) is refilled from PostgreSQL: a key revoked meanwhile is refused, the others served', async () => {
      const endpoint = byId('shopfront.shop');
      const team = await a.newTeam(50, 1000);
      const other = await a.newTeam(50, 1000);
      const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'lost-copy'));
      for (const key of [team.key, other.key]) success(await b.get(url, { 'x-api-key': key }));
      // Revoked in PostgreSQL alone, as if Redis had been down and then restarted empty.
      await sql.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [team.keyId]);
      await sql.query('UPDATE teams SET keys_version = keys_version + 1 WHERE id = $1', [team.team.id]);
      assert.equal(success(await b.get(url, { 'x-api-key': team.key })).meta.cached, true, 'the copy has not changed: the node still admits by memory');
      await redis.del(copyOf(team.team.id), copyOf(other.team.id));
      expectError(await b.get(url, { 'x-api-key': team.key }), 401, 'UNAUTHORIZED', { authed: false });
      const body = success(await b.get(url, { 'x-api-key': other.key }));
      assert.equal(body.meta.creditsRemaining, 50, 'its first request was a cache hit');
      assert.equal(await redis.hget(copyOf(other.team.id), 'credits'), '50', 'the copy was refilled');
      assert.ok((await redis.pttl(copyOf(other.team.id))) > 0, 'and expires');
    });

    test('a revocation through stores without Redis is refused while nodes keep copies, and changes nothing', async () => {
      const endpoint = byId('shopfront.shop');
      const team = await a.newTeam(50, 1000);
      const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'no-redis-cli'));
      success(await b.get(url, { 'x-api-key': team.key }));
      const alone = await openPostgresStores({ url: a.openAnother.databaseUrl as string });
      try {
        await assert.rejects(alone.accounts.revokeKey(team.keyId), /keep copies of keys in Redis .*REDIS_URL and REDIS_PREFIX/);
        await assert.rejects(alone.accounts.updateTeam(team.team.id, { rateLimit: 1 }), /REDIS_URL/);
      } finally {
        await alone.close();
      }
      success(await b.get(url, { 'x-api-key': team.key }));
      const [row] = (await sql.query('SELECT revoked_at FROM api_keys WHERE id = $1', [team.keyId])).rows;
      assert.equal(row.revoked_at, null);
    });

    test('a target deleted after a 404 on one node is not served from Redis by the other', async () => {
      const endpoint = byId('snapmsg.profile');
      const team = await a.newTeam(50, 1000);
      const query = variantQuery(endpoint, 'gone-across');
      success(await a.get(urlOf(endpoint, {}, query), { 'x-api-key': team.key }));
      assert.equal(success(await b.get(urlOf(endpoint, { cache_max_age: '1d' }, query), { 'x-api-key': team.key })).meta.cached, true);
      a.script = async () => {
        throw new UpstreamOutcome('not_found', endpoint.platform, 'gone');
      };
      expectError(await a.get(urlOf(endpoint, {}, query), { 'x-api-key': team.key }), 404, 'NOT_FOUND', { authed: true });
      b.script = a.script;
      expectError(await b.get(urlOf(endpoint, { cache_max_age: '1d' }, query), { 'x-api-key': team.key }), 404, 'NOT_FOUND', { authed: true });
    });

    test('an entry gone from Redis is served from PostgreSQL and copied back', async () => {
      const endpoint = byId('linkpage-b.page');
      const team = await a.newTeam(50, 1000);
      const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'copiedback'));
      const first = success(await a.get(url, { 'x-api-key': team.key }));
      const entries = await redis.keys(`${a.openAnother.redisPrefix}cache:e:*`);
      assert.ok(entries.length > 0);
      await redis.del(...entries);
      const before = b.stores.roundTrips?.().postgres ?? 0;
      const again = success(await b.get(url, { 'x-api-key': team.key }));
      assert.equal(again.meta.cached, true);
      assert.deepEqual(again.data, first.data);
      assert.ok((b.stores.roundTrips?.().postgres ?? 0) > before, 'read from PostgreSQL');
      assert.ok(await until(async () => (await redis.keys(`${a.openAnother.redisPrefix}cache:e:*`)).length > 0), 'copied back into Redis');
    });
  });
});
