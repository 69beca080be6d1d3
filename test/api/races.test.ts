// Concurrency through the API: the last credit, the rolling rate-limit window, single-flight
// scrapes and clients that leave before their answer.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { endpoints } from '../../src/endpoints/index.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, fixtureResult, startHarness, type Harness } from './harness.ts';
import { expectError, flightShares, ledgerState, sleep, success, until, urlOf, variantQuery, type Response } from './support.ts';

const count = (responses: Response[], status: number) => responses.filter((response) => response.statusCode === status).length;

describe('racing for credits', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 10 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  test('200 concurrent live scrapes for the last credit: exactly one 200, the rest 402, one charge row', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await h.newTeam(1, 1000);
    const responses = await Promise.all(Array.from({ length: 200 }, () => h.get(urlOf(endpoint), { 'x-api-key': team.key })));
    assert.equal(count(responses, 200), 1);
    assert.equal(count(responses, 402), 199);
    for (const response of responses) if (response.statusCode === 402) expectError(response, 402, 'INSUFFICIENT_CREDITS', { authed: true });
    const winner = success(responses.find((response) => response.statusCode === 200) as Response);
    assert.equal(winner.meta.creditsRemaining, 0);
    const state = await ledgerState(h, team.team.id);
    assert.equal(state.balance, 0);
    assert.equal(state.sum, 0);
    assert.equal(state.pending, 0);
    const entries = await h.stores.ledger.entries(team.team.id, 1000);
    const charges = entries.filter((entry) => entry.reason === 'charge');
    assert.equal(charges.length, 1);
    assert.equal(charges[0]?.requestId, winner.meta.requestId);
    assert.equal(entries.filter((entry) => entry.reason === 'refund').length, 0);
  });

  test('slow scrapes of distinct targets racing for 5 credits: exactly 5 answers 200, balance never below 0', async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await h.newTeam(5, 1000);
    h.script = async (e) => {
      await sleep(20);
      return fixtureResult(e);
    };
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => h.get(urlOf(endpoint, {}, variantQuery(endpoint, `race${i}`)), { 'x-api-key': team.key })),
    );
    assert.equal(count(responses, 200), 5);
    assert.equal(count(responses, 402), 55);
    const remaining = responses.filter((response) => response.statusCode === 200).map((response) => success(response).meta.creditsRemaining);
    for (const value of remaining) assert.ok(value >= 0 && value <= 4);
    const state = await ledgerState(h, team.team.id);
    assert.deepEqual({ balance: state.balance, sum: state.sum, pending: state.pending }, { balance: 0, sum: 0, pending: 0 });
  });
});

describe('the rate limit under concurrency and over time', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 10 });
  });
  after(() => h.close());

  test('300 concurrent requests against a limit of 100: exactly 100 admitted', async () => {
    const endpoint = byId('snapmsg.profile');
    const team = await h.newTeam(1000, 100);
    const responses = await Promise.all(Array.from({ length: 300 }, () => h.get(urlOf(endpoint), { 'x-api-key': team.key })));
    const admitted = responses.filter((response) => response.statusCode !== 429);
    assert.equal(admitted.length, 100);
    assert.equal(count(responses, 200), 100);
    assert.deepEqual(
      admitted.map((response) => Number(response.headers['x-ratelimit-remaining'])).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
    );
    for (const response of responses) {
      if (response.statusCode !== 429) continue;
      expectError(response, 429, 'RATE_LIMITED', { authed: true });
      assert.equal(response.headers['retry-after'], '60');
      assert.equal(response.headers['x-ratelimit-reset'], '60');
    }
    assert.equal(await h.balance(team.team.id), 900);
  });

  test('a rolling 60-second window: only the requests that left it are freed', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await h.newTeam(10_000, 100);
    const get = () => h.get(urlOf(endpoint), { 'x-api-key': team.key });
    // A minute boundary falls at t0 + 30 s: a fixed window would reset there.
    const t0 = Math.ceil(h.clock.now / 60_000) * 60_000 + 30_000;
    const times = [...Array.from({ length: 10 }, () => t0), ...Array.from({ length: 90 }, (_, k) => t0 + Math.round(((k + 1) * 50_000) / 90))];
    for (const [i, at] of times.entries()) {
      h.clock.now = at;
      const response = await get();
      assert.equal(response.statusCode, 200, `request ${i + 1} at +${at - t0} ms`);
      const remaining = 100 - (i + 1);
      assert.equal(response.headers['x-ratelimit-remaining'], String(remaining));
      assert.equal(response.headers['x-ratelimit-reset'], remaining > 0 ? '0' : '10');
      assert.equal(response.headers['x-ratelimit-limit'], '100');
    }
    assert.equal(h.clock.now, t0 + 50_000);
    const over = await get();
    expectError(over, 429, 'RATE_LIMITED', { authed: true });
    assert.equal(over.headers['retry-after'], '10');
    assert.equal(over.headers['x-ratelimit-reset'], '10');
    assert.equal(over.headers['x-ratelimit-remaining'], '0');

    h.clock.now = t0 + 59_999;
    const stillOver = await get();
    expectError(stillOver, 429, 'RATE_LIMITED', { authed: true });
    assert.equal(stillOver.headers['retry-after'], '1');

    // The ten requests of t = 0 leave the window; the rest stay.
    h.clock.now = t0 + 60_001;
    for (let i = 0; i < 10; i++) {
      const response = await get();
      assert.equal(response.statusCode, 200, `freed request ${i + 1}`);
      assert.equal(response.headers['x-ratelimit-remaining'], String(9 - i));
    }
    const eleventh = await get();
    expectError(eleventh, 429, 'RATE_LIMITED', { authed: true });
    assert.equal(eleventh.headers['retry-after'], '1');

    // The request of t = 556 ms is freed at t = 60.556 s, one only.
    h.clock.now = times[10] as number + 60_000;
    assert.equal((await get()).statusCode, 200);
    expectError(await get(), 429, 'RATE_LIMITED', { authed: true });
    // 429s were not counted: 111 admitted requests, 111 credits.
    assert.equal(await h.balance(team.team.id), 10_000 - 111);
  });

  test('cache hits and errors count toward the limit', async () => {
    const posts = byId('socialnet.profile.posts');
    const team = await h.newTeam(1, 5);
    const as = (url: string) => h.get(url, { 'x-api-key': team.key });
    const responses: Response[] = [];
    responses.push(await as(urlOf(posts)));
    responses.push(await as(urlOf(posts, { cache_max_age: '1d' })));
    responses.push(await as(`${posts.path}?cache_max_age=1d`));
    responses.push(await as(urlOf(posts, { cursor: 'garbage' })));
    responses.push(await as(urlOf(posts)));
    assert.deepEqual(
      responses.map((response) => response.statusCode),
      [200, 200, 422, 400, 402],
    );
    assert.deepEqual(
      responses.map((response) => response.headers['x-ratelimit-remaining']),
      ['4', '3', '2', '1', '0'],
    );
    assert.equal(success(responses[1] as Response).meta.cached, true);
    expectError(await as(urlOf(posts, { cache_max_age: '1d' })), 429, 'RATE_LIMITED', { authed: true });
  });
});

describe('single-flight: identical live scrapes in flight share one upstream fetch', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 1000 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  for (const endpoint of endpoints) {
    test(`${endpoint.path}: 20 concurrent callers of two teams, one extractor call, each charged and answered`, async () => {
      const a = await h.newTeam(100, 1000);
      const b = await h.newTeam(100, 1000);
      const query = variantQuery(endpoint, 'flight');
      const pendingOf = async () =>
        ((await h.stores.ledger.usage(a.team.id))?.pending ?? 0) + ((await h.stores.ledger.usage(b.team.id))?.pending ?? 0);
      h.script = async (e) => {
        // Wait until every caller holds its reservation, then 50 ms more.
        await until(async () => (await pendingOf()) === 20, 3000);
        await sleep(50);
        return fixtureResult(e);
      };
      const calls = h.calls.length;
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => h.get(urlOf(endpoint, {}, query), { 'x-api-key': (i % 2 === 0 ? a : b).key })),
      );
      assert.equal(h.calls.length, calls + 1, 'one upstream fetch');
      const bodies = responses.map(success);
      assert.equal(new Set(bodies.map((body) => body.meta.requestId)).size, 20, 'each caller has its own request id');
      for (const body of bodies) {
        assert.equal(body.meta.creditsCharged, 1);
        assert.equal(body.meta.cached, false);
        assert.equal(body.meta.creditsRemaining, 90);
        assert.deepEqual(body.data, bodies[0]?.data);
      }
      for (const [team, parity] of [[a, 0], [b, 1]] as const) {
        const state = await ledgerState(h, team.team.id);
        assert.deepEqual({ balance: state.balance, sum: state.sum, pending: state.pending }, { balance: 90, sum: 90, pending: 0 });
        const charged = (await h.stores.ledger.entries(team.team.id, 1000)).filter((entry) => entry.reason === 'charge').map((entry) => entry.requestId);
        const mine = bodies.filter((_, i) => i % 2 === parity).map((body) => body.meta.requestId);
        assert.deepEqual([...charged].sort(), [...mine].sort());
      }
    });
  }

  test('a shared scrape that fails fails every caller, and every caller is refunded', async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await h.newTeam(100, 1000);
    const shares = await flightShares(h);
    // Fails once all ten hold their credit and the nine others have joined the first's scrape.
    h.script = async (e) => {
      await until(async () => (await h.stores.ledger.usage(team.team.id))?.pending === 10 && (await flightShares(h)) === shares + 9, 3000);
      throw new UpstreamOutcome('blocked', e.platform, 'captcha');
    };
    const calls = h.calls.length;
    const responses = await Promise.all(Array.from({ length: 10 }, () => h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'fails')), { 'x-api-key': team.key })));
    assert.equal(h.calls.length, calls + 1);
    for (const response of responses) expectError(response, 502, 'UPSTREAM_BLOCKED', { authed: true });
    const state = await ledgerState(h, team.team.id);
    assert.deepEqual({ balance: state.balance, sum: state.sum, pending: state.pending }, { balance: 100, sum: 100, pending: 0 });
  });

  test('scrapes of different switches are not shared', async () => {
    const endpoint = byId('socialnet.profile');
    const team = await h.newTeam(100, 1000);
    // Every scrape waits until all three requests hold their credit and the one that can share
    // has joined: they are in flight together.
    const shares = await flightShares(h);
    h.script = async (e) => {
      await until(async () => (await h.stores.ledger.usage(team.team.id))?.pending === 3 && (await flightShares(h)) === shares + 1, 3000);
      return fixtureResult(e);
    };
    const calls = h.calls.length;
    const as = { 'x-api-key': team.key };
    const responses = await Promise.all([
      h.get(urlOf(endpoint, { businessHours: 'false' }), as),
      h.get(urlOf(endpoint, { businessHours: 'true' }), as),
      h.get(urlOf(endpoint, { businessHours: '0' }), as),
    ]);
    for (const response of responses) success(response);
    assert.equal(h.calls.length, calls + 2, 'false and 0 are the same switch: one scrape for both');
  });
});

describe('a client that disconnects before its answer', () => {
  let h: Harness;
  let port = 0;
  before(async () => {
    h = await startHarness({ credits: 10 });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as AddressInfo).port;
  });
  after(() => h.close());

  /** A GET over a real socket; resolves with the status, or null when the socket was destroyed. */
  const realGet = (path: string) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { 'x-api-key': h.key } });
    const done = new Promise<number | null>((resolve) => {
      req.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      req.on('error', () => resolve(null));
      req.on('close', () => resolve(null));
    });
    req.end();
    return { req, done };
  };

  test('over a real socket a completed request is charged', async () => {
    const endpoint = byId('linkpage-a.profile');
    const before = await h.balance();
    const { done } = realGet(urlOf(endpoint, {}, variantQuery(endpoint, 'sock')));
    assert.equal(await done, 200);
    assert.equal(await h.balance(), before - 1);
  });

  test('is not charged; the result is still cached', async () => {
    const endpoint = byId('linkpage-b.page');
    const query = variantQuery(endpoint, 'gone');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    h.script = async (e) => {
      entered();
      await gate;
      return fixtureResult(e);
    };
    try {
      const before = await ledgerState(h, h.team.id);
      const { req, done } = realGet(urlOf(endpoint, {}, query));
      await started;
      assert.equal((await ledgerState(h, h.team.id)).pending, 1, 'the credit is reserved while the scrape runs');
      req.destroy();
      assert.equal(await done, null);
      await sleep(100);
      release();
      assert.ok(await until(async () => (await ledgerState(h, h.team.id)).pending === 0), 'the reservation ends');
      const after = await ledgerState(h, h.team.id);
      assert.equal(after.balance, before.balance, 'not charged');
      assert.equal(after.sum, after.balance);
      const latest = await h.stores.ledger.entries(h.team.id, 2);
      assert.deepEqual(latest.map((entry) => [entry.reason, entry.amount]).sort(), [['charge', -1], ['refund', 1]]);
      assert.equal(latest[0]?.requestId, latest[1]?.requestId);
    } finally {
      h.script = defaultScript;
    }
    const calls = h.calls.length;
    const hit = success(await h.get(urlOf(endpoint, { cache_max_age: '1d' }, query)));
    assert.equal(hit.meta.cached, true, 'the successful result was stored');
    assert.equal(h.calls.length, calls);
  });
});
